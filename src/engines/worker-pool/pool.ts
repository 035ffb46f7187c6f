/**
 * @module engines/worker-pool/pool
 * A pool of worker threads for in-process engines that block the thread they
 * run on (eSpeak NG, and local neural engines later). The engine supplies the
 * worker script, each job's message and a decoder for the chunks; the pool
 * does the rest:
 *
 * - one job per worker, a bounded queue in front (full → `engine_unavailable`);
 * - deadlines: a job that waits longer than `queueTimeoutMs` fails with
 *   `engine_unavailable`; one that works longer than `jobTimeoutMs` (time the
 *   worker is paused for its consumer does not count), or whose consumer leaves
 *   a full buffer unread that long, fails with `engine_timeout`;
 * - cancellation and back-pressure through a shared control block per worker
 *   (see `protocol.ts`, and `serve.ts` for the worker's half); a job nobody
 *   consumes any more is cancelled at once, and a worker that does not stop
 *   within `cancelGraceMs` of a cancel is terminated and replaced — unless the
 *   engine is not `interruptible` (sherpa-onnx), whose workers are only ever
 *   terminated between calls;
 * - a worker that dies fails only its own job (`engine_error`) and is replaced
 *   with backoff, so a broken install does not spin.
 */
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../errors/api-error.js';
import type { Logger } from '../../log/logger.js';
import { Job, type RawChunk } from './job.js';
import { CONTROL, CONTROL_SLOTS, type JobEnvelope, type PoolWorkerData, type PoolWorkerMessage, type Samples, type StageJob } from './protocol.js';
import { JobStream, type ChunkDecoder, type JobControl } from './stream.js';

/**
 * A continuation is due this long before its listener would run out of audio: time for the
 * worker to make its first chunk and for the chunk to reach the client.
 */
export const CONTINUATION_LEAD_MS = 100;

export const POOL_DEFAULTS = { queueTimeoutMs: 10_000, jobTimeoutMs: 120_000, cancelGraceMs: 2_000, stopWaitMs: 30_000 };

/**
 * Longest a continuation waits behind new requests' first pieces, however much audio its listener
 * still has: a request read faster than real time (a download, a narration) still moves.
 */
export const CONTINUATION_MAX_WAIT_MS = 2_000;

export interface WorkerPoolOptions<R> {
  /** The engine id, for logs. */
  name: string;
  /** The engine's worker script; it calls `serveJobs` (`serve.ts`). */
  workerUrl: URL;
  /** Passed to every worker script (`engineWorkerData()`). */
  workerData?: unknown;
  workers: number;
  /** Jobs that may wait for a worker; more are refused with `engine_unavailable`. */
  queueLimit: number;
  /** Engine chunks a worker may run ahead of a slow consumer before it pauses. */
  highWater: number;
  /** Longest a job may wait for a worker. */
  queueTimeoutMs?: number;
  /** Longest a job may work, and longest its consumer may leave a full buffer unread. */
  jobTimeoutMs?: number;
  /** How long a cancelled worker may take to stop before it is terminated and replaced. */
  cancelGraceMs?: number;
  /**
   * False for engines whose native code must never be interrupted: terminating a worker thread
   * while sherpa-onnx generates ends the whole process (`terminate called after throwing an
   * instance of 'Napi::Error'`). Such a worker is never terminated while it runs a job: one that
   * does not stop within the grace period is left to finish its call (it takes no new job until
   * then), and stop() waits for running calls, up to `stopWaitMs`, before terminating workers.
   */
  interruptible?: boolean;
  /** How long stop() waits for running calls of a non-interruptible engine. */
  stopWaitMs?: number;
  /** Longest a continuation waits behind first pieces (default CONTINUATION_MAX_WAIT_MS). */
  continuationMaxWaitMs?: number;
  logger: Logger;
  /** Each worker's ready report (all run the same script, so they agree). */
  onReady?(info: R): void;
}

/** The pool settings an engine passes through from its configuration. */
export type PoolLimits = Pick<WorkerPoolOptions<unknown>, 'workers' | 'queueLimit' | 'highWater' | 'queueTimeoutMs' | 'jobTimeoutMs' | 'cancelGraceMs'>;

export interface WorkerPoolStats {
  /** Workers ready to take jobs (busy or not). */
  workers: number;
  /** Workers running a job (including one still stopping after its consumer left). */
  busy: number;
  /** Jobs waiting for a worker. */
  queued: number;
  /** Of those, background work (long-form jobs' segments), and the workers running such work. */
  backgroundQueued: number;
  backgroundRunning: number;
  /** Messages made but not yet taken by consumers: bounded by highWater per running job. */
  bufferedChunks: number;
  /** Busy workers waiting for their consumer to read (back-pressure): each makes nothing until then. */
  paused: number;
  /** Since start, each job counted once by how it ended; `refused` never entered the queue. */
  jobs: { submitted: number; completed: number; failed: number; cancelled: number; queueTimeouts: number; jobTimeouts: number; refused: number };
  /** Workers that exited on their own, and workers terminated because they did not stop when told. */
  workerExits: number;
  workersTerminated: number;
}

export interface SubmitOptions {
  /** The next piece of a request already speaking (see WorkerPool.submit). */
  continuation?: boolean;
  /** Working time of the request's earlier pieces, counted against this one's job deadline. */
  workedMs?: number;
  /** For a continuation: when (`performance.now()` ms) its listener would run out of audio. */
  dueAt?: number;
  /**
   * Resample and encode in the worker (audio/output-stage): the job's chunks are then bytes, and
   * its stream's `stageState()` says where the stage ended once the job has completed.
   */
  stage?: StageJob;
  /**
   * Work no listener waits for (a long-form job's segment): taken only when no other job waits,
   * and never onto the last idle worker of a pool that has more than one; never refused for a full
   * queue and never timed out there (its caller's signal still cancels it).
   */
  background?: boolean;
}

type Outcome = 'completed' | 'failed' | 'cancelled' | 'queueTimeouts' | 'jobTimeouts';

/** A worker thread and the job it is running. */
interface Slot<J, S extends Samples, E> {
  worker: Worker;
  control: Int32Array;
  job: Job<J, S, E> | null;
  ready: boolean;
  /** Terminated by the pool (a cancel that did not land), not crashed. */
  terminated: boolean;
}

export class WorkerPool<J, S extends Samples, E, R> implements JobControl<J, S, E> {
  private readonly slots: Slot<J, S, E>[] = [];
  private readonly queue: Job<J, S, E>[] = [];
  /** stop() waiting for running calls to return (non-interruptible engines). */
  private readonly idleWaiters = new Set<() => void>();
  private readonly queueTimeoutMs: number;
  private readonly jobTimeoutMs: number;
  private readonly cancelGraceMs: number;
  private nextJobId = 1;
  private started = false;
  private stopping = false;
  /** Consecutive workers lost without a successful replacement, for the backoff. */
  private losses = 0;
  private readonly counts = { submitted: 0, completed: 0, failed: 0, cancelled: 0, queueTimeouts: 0, jobTimeouts: 0, refused: 0 };
  private workerExits = 0;
  private workersTerminated = 0;

  constructor(private readonly options: WorkerPoolOptions<R>) {
    this.queueTimeoutMs = options.queueTimeoutMs ?? POOL_DEFAULTS.queueTimeoutMs;
    this.jobTimeoutMs = options.jobTimeoutMs ?? POOL_DEFAULTS.jobTimeoutMs;
    this.cancelGraceMs = options.cancelGraceMs ?? POOL_DEFAULTS.cancelGraceMs;
  }

  async start(): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < this.options.workers; i++) ready.push(this.spawn());
    await Promise.all(ready);
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const job of this.queue.splice(0)) {
      this.clearTimers(job);
      job.phase = 'done';
      this.settle(job, 'failed', new ApiError('engine_unavailable', {}, { 'retry-after': '1' }));
    }
    let slots = this.slots.splice(0);
    if (this.options.interruptible === false) {
      for (const slot of slots) {
        if (!slot.job) continue;
        this.settle(slot.job, 'failed', new ApiError('engine_unavailable', {}, { 'retry-after': '1' }));
        this.stopJob(slot, slot.job);
      }
      await this.idle(slots, this.options.stopWaitMs ?? POOL_DEFAULTS.stopWaitMs);
      const stuck = slots.filter((slot) => slot.job);
      if (stuck.length) {
        // Terminating these would end the process; leave them to finish and let the process exit past them.
        this.options.logger.error({ engine: this.options.name, workers: stuck.length }, 'engine workers still inside a call at stop; leaving them running');
        for (const slot of stuck) slot.worker.unref();
        slots = slots.filter((slot) => !slot.job);
      }
    }
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Resolves once none of `slots` runs a job, or after `ms`. */
  private async idle(slots: Slot<J, S, E>[], ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while (slots.some((slot) => slot.job) && performance.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.idleWaiters.add(resolve);
        timer = setTimeout(resolve, Math.max(1, deadline - performance.now())).unref();
      });
      clearTimeout(timer);
    }
  }

  isReady(): boolean {
    return this.started && !this.stopping && this.slots.some((s) => s.ready);
  }

  /**
   * Resolves once nothing is queued or running, or after `ms`: for a pool being replaced, which is
   * given no new work, so its jobs end as they would have before it stops.
   */
  async settled(ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while ((this.queue.length > 0 || this.slots.some((slot) => slot.job)) && performance.now() < deadline) {
      if (this.slots.some((slot) => slot.job)) await this.idle(this.slots, Math.max(1, deadline - performance.now()));
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Queues a job and returns its chunks as `decoder` makes them. The queue serves the job whose
   * audio is needed soonest: a new request's first piece is needed from the moment it arrives; a
   * `continuation` (the next piece of a request already speaking) at `dueAt`, when its listener
   * would run out of the audio it already has, and at the latest `continuationMaxWaitMs` after it
   * was queued. So a waiting request's first audio goes ahead of more audio for one that is
   * already being heard, until that one's listener is about to run dry. A continuation is never
   * refused for a full queue. `workedMs` is the working time the request's earlier pieces spent,
   * which counts against this one's `jobTimeoutMs`. Throws `engine_unavailable` at once when no
   * worker is ready or the queue is full; later failures (deadlines, a crashed worker) are thrown
   * by the iterator. Aborting `signal`, or leaving the iteration, cancels the job.
   */
  submit<T>(payload: J, signal: AbortSignal, decoder: ChunkDecoder<S, E, T>, options: SubmitOptions = {}): JobStream<J, S, E, T> {
    const continuation = options.continuation === true;
    // A continuation belongs to a request already admitted and speaking: the queue bound is for new work.
    const background = options.background === true;
    // The queue bound is for new foreground work: continuations belong to admitted requests, and background work waits its turn.
    const full = !continuation && !background && this.queue.length - this.backgroundQueued() >= this.options.queueLimit && !this.hasIdleWorker();
    if (!this.isReady() || full) {
      this.counts.refused++;
      throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
    }
    const now = performance.now();
    const latest = now + (this.options.continuationMaxWaitMs ?? CONTINUATION_MAX_WAIT_MS);
    const due = continuation ? Math.min(options.dueAt ?? latest, latest) : now;
    const job = new Job<J, S, E>(this.nextJobId++, payload, continuation, options.workedMs ?? 0, due, options.stage);
    job.background = background;
    this.counts.submitted++;
    this.queue.push(job);
    if (!background) job.timer = setTimeout(() => this.queueExpired(job), this.queueTimeoutMs).unref();
    // The stream first, so a signal that has already fired takes the job out before any worker sees it.
    const stream = new JobStream(job, decoder, signal, this, this.options.name);
    this.dispatch();
    return stream;
  }

  /** Whether a job submitted now would start at once rather than wait for a worker. */
  hasIdleWorker(): boolean {
    return this.slots.some((s) => s.ready && !s.job);
  }

  stats(): WorkerPoolStats {
    let busy = 0;
    let bufferedChunks = 0;
    let paused = 0;
    for (const slot of this.slots) {
      if (!slot.job) continue;
      busy++;
      bufferedChunks += slot.job.chunks.length;
      if (Atomics.load(slot.control, CONTROL.waiting) === 1) paused++;
    }
    return {
      workers: this.slots.filter((s) => s.ready).length,
      busy,
      queued: this.queue.length,
      backgroundQueued: this.backgroundQueued(),
      backgroundRunning: this.slots.filter((s) => s.job?.background).length,
      bufferedChunks,
      paused,
      jobs: { ...this.counts },
      workerExits: this.workerExits,
      workersTerminated: this.workersTerminated,
    };
  }

  /** Terminates a busy worker the way a crash would end it; for fault-injection tests and drills. */
  crashBusyWorker(): boolean {
    const slot = this.slots.find((s) => s.job !== null);
    if (!slot) return false;
    void slot.worker.terminate();
    return true;
  }

  taken(job: Job<J, S, E>, chunk: RawChunk<S, E>): void {
    const slot = this.slotOf(job);
    if (!slot) return;
    Atomics.sub(slot.control, CONTROL.inFlight, chunk.units);
    Atomics.notify(slot.control, CONTROL.inFlight);
    job.trackPause(Atomics.load(slot.control, CONTROL.inFlight), this.options.highWater, true);
  }

  cancel(job: Job<J, S, E>): void {
    if (job.abandoned) return;
    job.abandoned = true;
    job.chunks.length = 0;
    if (job.phase === 'queued') {
      const index = this.queue.indexOf(job);
      if (index >= 0) this.queue.splice(index, 1);
      this.clearTimers(job);
      job.phase = 'done';
      this.settle(job, 'cancelled');
      return;
    }
    const slot = this.slotOf(job);
    this.settle(job, 'cancelled');
    if (slot) this.stopJob(slot, job);
  }

  private backgroundQueued(): number {
    let count = 0;
    for (const job of this.queue) if (job.background) count++;
    return count;
  }

  /**
   * Takes the foreground job whose audio is due first (the earlier queued on a tie). Background
   * work only when none waits, and only while another worker stays idle for the next request (or
   * the pool has one worker): with two or more workers, a request never waits behind a job.
   */
  private next(): Job<J, S, E> | undefined {
    let pick = -1;
    let background = -1;
    for (let i = 0; i < this.queue.length; i++) {
      const job = this.queue[i];
      if (job.background) {
        if (background < 0) background = i;
      } else if (pick < 0 || job.due < this.queue[pick].due) pick = i;
    }
    if (pick >= 0) return this.queue.splice(pick, 1)[0];
    if (background < 0) return undefined;
    const ready = this.slots.filter((s) => s.ready);
    const idle = ready.filter((s) => !s.job).length;
    return idle >= 2 || (ready.length === 1 && idle === 1) ? this.queue.splice(background, 1)[0] : undefined;
  }

  private wakeIdle(): void {
    for (const wake of this.idleWaiters) wake();
    this.idleWaiters.clear();
  }

  private slotOf(job: Job<J, S, E>): Slot<J, S, E> | undefined {
    return job.phase === 'running' ? this.slots.find((s) => s.job === job) : undefined;
  }

  /** Ends a job for its consumer and counts how, once. */
  private settle(job: Job<J, S, E>, outcome: Outcome, error: unknown = null): void {
    if (job.finished) return;
    this.counts[outcome]++;
    job.finish(error);
  }

  private clearTimers(job: Job<J, S, E>): void {
    if (job.timer) clearTimeout(job.timer);
    if (job.graceTimer) clearTimeout(job.graceTimer);
    job.timer = job.graceTimer = null;
  }

  private spawn(): Promise<void> {
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
    const workerData: PoolWorkerData = { control: control.buffer as SharedArrayBuffer, engine: this.options.workerData };
    const worker = new Worker(this.options.workerUrl, { workerData });
    const slot: Slot<J, S, E> = { worker, control, job: null, ready: false, terminated: false };
    this.slots.push(slot);
    return new Promise((resolve, reject) => {
      worker.on('message', (message: PoolWorkerMessage<R, E, S>) => {
        if (message.type === 'ready') {
          slot.ready = true;
          this.options.onReady?.(message.info);
          resolve();
          this.dispatch();
          return;
        }
        this.onJobMessage(slot, message);
      });
      worker.on('error', (err) => {
        this.options.logger.error({ err, engine: this.options.name }, 'engine worker failed');
      });
      worker.on('exit', (code) => {
        if (!slot.ready) reject(new Error(`${this.options.name} worker exited with code ${code} before it was ready`));
        this.onExit(slot, code);
      });
    });
  }

  private onJobMessage(slot: Slot<J, S, E>, message: Exclude<PoolWorkerMessage<R, E, S>, { type: 'ready' }>): void {
    const job = slot.job;
    if (!job || message.jobId !== job.id) return;
    if (message.type === 'chunk') {
      if (job.finished) return; // cancelled or timed out: the worker is stopping
      job.chunks.push({ samples: message.samples, events: message.events, units: message.units, made: message.made });
      job.trackPause(Atomics.load(slot.control, CONTROL.inFlight), this.options.highWater);
      job.notify();
      return;
    }
    slot.job = null;
    this.clearTimers(job);
    job.phase = 'done';
    this.wakeIdle();
    if (message.type === 'end') job.stageState = message.stage;
    if (message.type === 'failed') {
      this.options.logger.error({ engine: this.options.name, reason: message.message }, 'synthesis failed in the engine worker');
      this.settle(job, 'failed', new ApiError('engine_error', { reason: '' }));
    } else {
      this.settle(job, 'completed');
    }
    this.dispatch();
  }

  private onExit(slot: Slot<J, S, E>, code: number): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const job = slot.job;
    slot.job = null;
    this.wakeIdle();
    if (job) {
      this.clearTimers(job);
      job.phase = 'done';
      this.settle(job, 'failed', new ApiError('engine_error', { reason: ': the engine worker stopped unexpectedly' }));
    }
    if (this.stopping) return;
    if (!slot.terminated) this.workerExits++;
    this.losses++;
    this.options.logger.warn({ engine: this.options.name, code, terminated: slot.terminated, losses: this.losses }, 'engine worker exited; replacing it');
    // Back off while workers keep dying so a broken install does not spin.
    const delay = Math.min(5000, 50 * 2 ** Math.min(this.losses, 7));
    setTimeout(() => {
      if (this.stopping) return;
      this.spawn().then(
        () => (this.losses = 0),
        (err) => this.options.logger.error({ err, engine: this.options.name }, 'engine worker could not be replaced'),
      );
    }, delay).unref();
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job) continue;
      const job = this.next();
      if (!job) return;
      this.clearTimers(job);
      slot.job = job;
      job.start();
      // Reset before posting: the worker is idle, so nothing races these writes.
      Atomics.store(slot.control, CONTROL.cancel, 0);
      Atomics.store(slot.control, CONTROL.inFlight, 0);
      const envelope: JobEnvelope<J> = { type: 'job', jobId: job.id, highWater: this.options.highWater, continuation: job.continuation, job: job.payload };
      if (job.stage) envelope.stage = job.stage;
      slot.worker.postMessage(envelope);
      this.armJobDeadline(slot, job, Math.max(1, this.jobTimeoutMs - job.workedBefore));
    }
  }

  private queueExpired(job: Job<J, S, E>): void {
    const index = this.queue.indexOf(job);
    if (index < 0) return;
    this.queue.splice(index, 1);
    job.timer = null;
    job.phase = 'done';
    this.settle(job, 'queueTimeouts', new ApiError('engine_unavailable', {}, { 'retry-after': '1' }));
  }

  /** Checks the job's two clocks when the nearer one could have run out, and re-arms otherwise. */
  private armJobDeadline(slot: Slot<J, S, E>, job: Job<J, S, E>, delay: number): void {
    job.timer = setTimeout(() => {
      job.timer = null;
      if (slot.job !== job || job.finished) return;
      const now = performance.now();
      const working = job.workedBefore + job.workingMs(now);
      const stalled = job.stalledMs(now);
      const limit = this.jobTimeoutMs;
      if (working < limit && stalled < limit) {
        this.armJobDeadline(slot, job, Math.max(1, Math.min(limit - working, limit - stalled)));
        return;
      }
      const reason = working >= limit ? '' : ': its audio was not read for that long';
      this.options.logger.warn({ engine: this.options.name, workingMs: Math.round(working), stalledMs: Math.round(stalled) }, 'engine job timed out; cancelling it');
      this.settle(job, 'jobTimeouts', new ApiError('engine_timeout', { seconds: Math.round(limit / 100) / 10, reason }));
      this.stopJob(slot, job);
    }, delay).unref();
  }

  /** Tells the worker to stop the job; terminates it if it has not stopped within the grace period. */
  private stopJob(slot: Slot<J, S, E>, job: Job<J, S, E>): void {
    Atomics.store(slot.control, CONTROL.cancel, 1);
    Atomics.notify(slot.control, CONTROL.inFlight);
    job.chunks.length = 0;
    if (job.graceTimer) return;
    job.graceTimer = setTimeout(() => {
      job.graceTimer = null;
      if (slot.job !== job) return;
      if (this.options.interruptible === false) {
        this.options.logger.warn({ engine: this.options.name, graceMs: this.cancelGraceMs }, 'engine worker did not stop when told; it cannot be interrupted, so it finishes its call first');
        return;
      }
      this.workersTerminated++;
      slot.terminated = true;
      this.options.logger.warn({ engine: this.options.name, graceMs: this.cancelGraceMs }, 'engine worker did not stop when told; terminating it');
      void slot.worker.terminate();
    }, this.cancelGraceMs).unref();
  }
}
