/**
 * @module jobs/runner
 * Runs long-form jobs on this server: claims work from the store's queue
 * (`JobRepository.claim`, a lease with a heartbeat), speaks each segment
 * in a synthesis session of its own, as every request is made (resolve, the
 * audio cache, the pipeline, the session's events) — at background priority
 * on the engine, so no waiting caller's first audio queues behind a book —
 * persists it, records the progress under the lease, and at the end stitches
 * the result, charges the job's hold once, under the job id as the charge's
 * key (the session's held policy), records the end, and only then removes the
 * segments: a job never shows succeeded before its charge is written.
 *
 * A run holds its job only while its lease holds: a heartbeat that finds the
 * lease gone (it lapsed and another server took it, or the job was
 * cancelled) stops the run, and every write after that is refused by the
 * store. A server that dies mid-job leaves its lease to lapse; the next
 * claim, here or on another server, starts at the first segment not yet
 * persisted. A segment whose engine is busy or away is tried again with
 * backoff; one that cannot be made (its voice deleted meanwhile, say) fails
 * the job, and the hold is released. A storage that cannot be reached (a
 * bucket away) only pauses the run: each write or the stitch is tried again
 * with backoff until it succeeds, the lease held meanwhile, so the job never
 * fails for it and the segments already stored stay. A segment counts as
 * persisted only once its put has completed (then the store's row says so).
 *
 * The reconciler makes each server's share of the bookkeeping exact: a job
 * that ended but whose charge or release was not recorded (its server
 * stopped in between) is billed then, idempotently; holds this server made
 * for jobs that ended elsewhere are dropped; and, on one server at a time
 * (`JobRepository.lead`), jobs past their retention are removed with their
 * files.
 */
import { randomUUID } from 'node:crypto';
import type { BlobStorage } from '../cache/blob-storage.js';
import type { JobsConfig } from '../config/schema.js';
import { ApiError, toApiError } from '../errors/api-error.js';
import { isRetryable } from '../errors/registry.js';
import type { Logger } from '../log/logger.js';
import { releaseHold, settleHold, SynthesisSession } from '../synthesis/session.js';
import type { SynthesisServices } from '../synthesis/services.js';
import type { SpeechInput } from '../synthesis/speech-input.js';
import type { JobRecord, JobRepository } from '../store/store.js';
import { jobDiagnostics, publishJob, type JobRunEnded, type JobRunStarted } from './diagnostics.js';
import { removeJobFiles, removeSegments, resultKey, segmentAudioKey, segmentTimingsKey, timestampsKey, type SegmentTimings } from './files.js';
import type { JobSpec, PlannedSegment } from './plan.js';
import { MissingSegmentError, stitch } from './stitch.js';
import { CONTENT_TYPES } from '../audio/format.js';

/** Attempts at one segment whose failure a retry can cure (a busy or absent engine) before the job fails. */
const SEGMENT_ATTEMPTS = 6;
const RETRY_BASE_MS = 500;

export interface JobRunnerOptions {
  config: JobsConfig;
  services: SynthesisServices;
  blobs: BlobStorage;
  logger: Logger;
  /** Called whenever a job this server runs changes (progress, end): watchers here hear it at once. */
  changed: (jobId: string) => void;
  /** Called when a job ended, so its webhook goes out without waiting for a poll. */
  ended: () => void;
  /** Job holds this server made at submit, dropped once their jobs are billed (`reconcile`). */
  holds: Set<string>;
  now?: () => number;
}

export const retentionMs = (config: JobsConfig) => config.retentionHours * 3_600_000;

export class JobRunner {
  private readonly config: JobsConfig;
  private readonly services: SynthesisServices;
  private readonly jobs: JobRepository;
  private readonly blobs: BlobStorage;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly runs = new Map<string, { controller: AbortController; done: Promise<void>; token: string }>();
  private timer: NodeJS.Timeout | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** A kick arrived while a look for work was under way: look again right after it. */
  private again = false;
  private stopped = true;
  /** Polling loops whose store failure was logged, until the store answers them again. */
  private readonly failing = new Set<string>();
  /** Identifies this server's sweeper lease. */
  private readonly owner = randomUUID();

  constructor(private readonly options: JobRunnerOptions) {
    this.config = options.config;
    this.services = options.services;
    this.jobs = options.services.store.jobs;
    this.blobs = options.blobs;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** Jobs this server is running now. */
  get running(): number {
    return this.runs.size;
  }

  start(): void {
    this.stopped = false;
    this.kick();
    const every = Math.max(this.config.pollMs * 5, 2_000);
    this.reconcileTimer = setInterval(() => void this.reconcile().then(() => this.storeAnswered('reconciliation'), (err) => this.storeFailed(err, 'job reconciliation failed')), every);
    this.reconcileTimer.unref();
  }

  /** Looks for queued work now rather than at the next poll (once more after a look already under way). */
  kick(): void {
    if (this.stopped || this.config.concurrency === 0) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
        return;
      }
      this.timer = setTimeout(() => this.kick(), this.config.pollMs);
      this.timer.unref();
    });
  }

  /**
   * Stops taking work and stops the runs here. Their leases are handed back (they lapse at once),
   * so another server, or this one restarted, resumes them from their last persisted segment.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    const runs = [...this.runs.entries()];
    for (const [, run] of runs) run.controller.abort(new Error('server stopping'));
    await Promise.all(runs.map(([, run]) => run.done));
    await Promise.all(runs.map(([id, run]) => this.jobs.heartbeat(id, run.token, 0, 1).catch(() => false)));
    await this.ticking;
  }

  private async tick(): Promise<void> {
    try {
      while (!this.stopped && this.runs.size < this.config.concurrency) {
        const token = randomUUID();
        const job = await this.jobs.claim(token, this.now(), this.config.leaseMs, this.config.maxRunningPerOrg);
        if (!job || this.stopped) {
          if (job) await this.jobs.heartbeat(job.id, token, 0, 1).catch(() => false);
          break;
        }
        this.launch(job, token);
      }
      this.storeAnswered('claims');
    } catch (err) {
      this.storeFailed(err, 'could not claim a job');
    }
  }

  /**
   * A poll of the store failed: logged once per outage and loop (a store failing over is polled every
   * second, and a line each time says nothing new); its return is logged once too.
   */
  private storeFailed(err: unknown, what: string): void {
    if (this.failing.has(what)) return;
    this.failing.add(what);
    this.logger.warn({ err }, `${what}; trying again, quietly, until the store answers`);
  }

  private storeAnswered(loop: 'claims' | 'reconciliation'): void {
    const what = loop === 'claims' ? 'could not claim a job' : 'job reconciliation failed';
    if (this.failing.delete(what)) this.logger.info({ loop }, 'job polling: the store answers again');
  }

  private launch(job: JobRecord, token: string): void {
    const controller = new AbortController();
    const done = this.run(job, token, controller)
      .catch((err) => this.logger.error({ err, job_id: job.id }, 'job run failed'))
      .finally(() => {
        this.runs.delete(job.id);
        this.kick();
      });
    this.runs.set(job.id, { controller, done, token });
    this.options.changed(job.id);
  }

  private async run(job: JobRecord, token: string, controller: AbortController): Promise<void> {
    const { signal } = controller;
    const spec = job.spec as JobSpec;
    const heartbeat = setInterval(() => {
      this.jobs
        .heartbeat(job.id, token, this.now(), this.config.leaseMs)
        .then((held) => {
          if (!held) controller.abort(new Error('lease lost'));
        })
        .catch((err) => this.logger.warn({ err, job_id: job.id }, 'job heartbeat failed'));
    }, this.config.heartbeatMs);
    heartbeat.unref();
    publishJob(jobDiagnostics.run, {
      instance: this.services.instanceId,
      jobId: job.id,
      orgId: job.orgId,
      attempt: job.attempts,
      segmentsDone: job.segmentsDone,
      segmentsTotal: job.segmentsTotal,
      trace: spec.trace ?? null,
    } satisfies JobRunStarted);
    this.logger.info({ job_id: job.id, from_segment: job.segmentsDone, segments: job.segmentsTotal, attempt: job.attempts }, job.segmentsDone > 0 ? 'job resumed' : 'job started');
    let outcome: JobRunEnded['outcome'] = 'stopped';
    let errorCode: string | null = null;
    let charging = false;
    try {
      let charactersDone = job.charactersDone;
      let audioSeconds = job.audioSeconds;
      for (let index = job.segmentsDone; index < spec.segments.length; index++) {
        signal.throwIfAborted();
        const segment = spec.segments[index];
        const started = performance.now();
        const made = await this.segmentWithRetries(job, spec, segment, index, signal);
        signal.throwIfAborted();
        // The audio last: a segment whose audio object exists is whole, timings and all.
        await this.stored(job, 'segment', signal, async () => {
          await this.blobs.put(segmentTimingsKey(job.id, index), Buffer.from(JSON.stringify(made.timings)));
          await this.blobs.put(segmentAudioKey(job.id, index), made.pcm);
        });
        charactersDone += segment.characters;
        audioSeconds += segment.pauseBefore + made.seconds;
        const held = await this.jobs.progress(job.id, token, {
          segmentsDone: index + 1,
          // Segments leave out the spaces they were cut at: the last one completes the count.
          charactersDone: index === spec.segments.length - 1 ? job.characters : Math.min(charactersDone, job.characters),
          audioSeconds,
        });
        if (!held) throw new Error('lease lost');
        publishJob(jobDiagnostics.segment, { instance: this.services.instanceId, jobId: job.id, index, characters: segment.characters, audioSeconds: made.seconds, ms: performance.now() - started });
        this.options.changed(job.id);
      }
      const result = await this.stored(job, 'result', signal, () => this.writeResult(job, spec));
      signal.throwIfAborted();
      // The charge is written before the job shows succeeded, so a client that sees it succeeded
      // sees its charge too. The job is first marked as being charged, fenced by the lease: a job
      // cancelled before that is not charged, and from then on a cancel is refused.
      if (!(await this.jobs.charging(job.id, token))) throw new Error('lease lost');
      charging = true;
      await this.charge(job, signal);
      const finishedAt = this.now();
      const ended = await this.jobs.finish(job.id, token, {
        status: 'succeeded',
        result,
        finishedAt: new Date(finishedAt).toISOString(),
        expiresAt: new Date(finishedAt + retentionMs(this.config)).toISOString(),
        now: finishedAt,
      });
      if (!ended) throw new Error('lease lost');
      outcome = 'succeeded';
      this.ended(job, 'succeeded', null);
      // Last, as it may take seconds on a bucket: nobody waits for it.
      await removeSegments(this.blobs, job.id).catch((err) => this.logger.warn({ err, job_id: job.id }, 'could not remove segments'));
    } catch (err) {
      if (signal.aborted) {
        this.logger.info({ job_id: job.id, reason: String((signal.reason as Error)?.message ?? signal.reason) }, 'job run stopped');
        return;
      }
      if ((err as Error)?.message === 'lease lost') {
        this.logger.warn({ job_id: job.id }, 'job lease lost; another run holds it or it was cancelled');
        return;
      }
      if (charging) {
        // Charged, or being charged: it cannot fail now. Its lease lapses and the next run records its end.
        this.logger.warn({ err, job_id: job.id }, 'could not record the end of a charged job; a later run will');
        return;
      }
      const error = toApiError(err);
      if (error.status >= 500) this.logger.error({ err, job_id: job.id }, 'job failed');
      const finishedAt = this.now();
      const ended = await this.jobs.finish(job.id, token, {
        status: 'failed',
        error: { code: error.code, message: error.message },
        finishedAt: new Date(finishedAt).toISOString(),
        expiresAt: new Date(finishedAt + retentionMs(this.config)).toISOString(),
        now: finishedAt,
      });
      if (!ended) return;
      await this.bill({ ...job, status: 'failed' });
      outcome = 'failed';
      errorCode = error.code;
      this.ended(job, 'failed', error.code);
      await removeSegments(this.blobs, job.id).catch(() => {});
    } finally {
      clearInterval(heartbeat);
      publishJob(jobDiagnostics.runEnd, { instance: this.services.instanceId, jobId: job.id, outcome, errorCode } satisfies JobRunEnded);
    }
  }

  private ended(job: JobRecord, status: 'succeeded' | 'failed', errorCode: string | null): void {
    publishJob(jobDiagnostics.end, { instance: this.services.instanceId, jobId: job.id, orgId: job.orgId, status, errorCode });
    this.options.changed(job.id);
    this.options.ended();
  }

  /** One segment, tried again while the failure is one a retry can cure (the engine busy, starting or away). */
  private async segmentWithRetries(job: JobRecord, spec: JobSpec, segment: PlannedSegment, index: number, signal: AbortSignal) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.segment(job, spec, segment, index, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        const error = toApiError(err);
        if (!isRetryable(error.code) || attempt >= SEGMENT_ATTEMPTS) throw err;
        this.logger.warn({ job_id: job.id, segment: index, attempt, code: error.code }, 'job segment failed; trying again');
        await pause(RETRY_BASE_MS * 2 ** (attempt - 1), signal);
      }
    }
  }

  /**
   * A step on the job's storage, tried until it succeeds: an unreachable storage pauses the run
   * (backoff doubling up to `storageRetryMaxMs`; the heartbeat keeps the lease meanwhile) and never
   * fails the job. Only a segment recorded as made but missing from the storage fails it.
   */
  private async stored<T>(job: JobRecord, operation: 'segment' | 'result', signal: AbortSignal, step: () => Promise<T>): Promise<T> {
    let waiting = false;
    try {
      for (let attempt = 1; ; attempt++) {
        signal.throwIfAborted();
        try {
          return await step();
        } catch (err) {
          if (signal.aborted || err instanceof MissingSegmentError) throw err;
          waiting = true;
          publishJob(jobDiagnostics.storage, { instance: this.services.instanceId, jobId: job.id, operation, attempt, waiting });
          const ms = Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), this.config.storageRetryMaxMs);
          this.logger.warn({ err, job_id: job.id, operation, attempt, retry_in_ms: ms }, 'job storage unreachable; the job waits and tries again');
          await pause(ms, signal);
        }
      }
    } finally {
      if (waiting) publishJob(jobDiagnostics.storage, { instance: this.services.instanceId, jobId: job.id, operation, attempt: 0, waiting: false });
    }
  }

  /**
   * Speaks one segment as 16-bit PCM at the result's rate, in a session of its own (held policy:
   * admitted with the job, no charge of its own): the same resolve, cache and pipeline as every
   * request, and the same session events, as background work.
   */
  private async segment(job: JobRecord, spec: JobSpec, segment: PlannedSegment, index: number, signal: AbortSignal) {
    const input: SpeechInput = {
      ...spec.input,
      ...(segment.voiceId ? { voiceId: segment.voiceId } : {}),
      transcript: segment.text,
      transcriptType: segment.ssml ? 'ssml' : 'text',
      outputFormat: { container: 'raw', encoding: 'pcm_s16le', sampleRate: spec.format.sampleRate },
      // Word timings are always kept, asked for or not: a job's captions are made from them.
      wordTimestamps: true,
      streaming: false,
      contextId: null,
    };
    const session = new SynthesisSession({ services: this.services, transport: 'job', requestId: `${job.id}/${index}`, clientRequestId: spec.clientRequestId, signal });
    try {
      const request = await session.admitSegment(input, { orgId: job.orgId, keyId: job.keyId });
      // Inputs with voices of their own (several speakers): each word names its voice.
      const voices = spec.segments.some((planned) => planned.voiceId !== undefined);
      const chunks: Buffer[] = [];
      const timings: SegmentTimings = { words: [], marks: [] };
      for await (const piece of session.pieces(request, session.signal, { cache: true })) {
        if (piece.audio.length > 0) chunks.push(piece.audio);
        for (const word of piece.words ?? []) timings.words.push({ word: word.word, start: word.start, end: word.end, ...(voices ? { voice: input.voiceId } : {}) });
        for (const mark of piece.marks ?? []) timings.marks.push(mark);
        session.produced(piece.seconds);
      }
      const pcm = Buffer.concat(chunks);
      if (pcm.length === 0) throw new ApiError('engine_error', { reason: ': the engine produced no audio' });
      return { pcm, timings, seconds: pcm.length / 2 / spec.format.sampleRate };
    } catch (err) {
      session.fail(err);
      throw err;
    } finally {
      await session.end();
    }
  }

  private async writeResult(job: JobRecord, spec: JobSpec) {
    const stitched = await stitch(this.blobs, job.id, spec.segments, spec.format);
    const bytes = await this.blobs.write(resultKey(job.id), stitched.audio);
    const timings = await stitched.timings();
    const timestamps = spec.input.wordTimestamps || timings.marks.length > 0;
    await this.blobs.put(timestampsKey(job.id), Buffer.from(JSON.stringify(timings)));
    return { contentType: CONTENT_TYPES[spec.format.container], bytes, durationSeconds: stitched.seconds, timestamps };
  }

  /**
   * Writes the charge of a job marked `charged` (`JobRepository.charging`), tried again until the
   * store takes it, the lease held meanwhile: so marked, it is no longer the reconciler's. A run that
   * takes the job over after a crash writes it again, which charges nothing more.
   */
  private async charge(job: BilledJob, signal: AbortSignal): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await settleHold(this.services, this.heldCharge(job));
        this.options.holds.delete(job.id);
        return;
      } catch (err) {
        if (signal.aborted) throw err;
        const ms = Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), this.config.storageRetryMaxMs);
        this.logger.warn({ err, job_id: job.id, attempt, retry_in_ms: ms }, 'could not charge a job yet; trying again');
        await pause(ms, signal);
        signal.throwIfAborted();
      }
    }
  }

  private heldCharge(job: BilledJob) {
    return {
      id: job.id,
      orgId: job.orgId,
      keyId: job.keyId,
      model: job.model,
      creditMultiplier: this.services.models.get(job.model)?.creditMultiplier ?? 1,
      characters: job.characters,
      endpoint: 'tts.jobs' as const,
      requestId: (job.spec as JobSpec).requestId,
    };
  }

  /**
   * Charges a succeeded job's hold, or releases a failed or cancelled one's, and records it: for
   * jobs that ended with their billing undone. The charge's key is the job id, so doing this again
   * (after a crash in between) charges nothing more.
   */
  async bill(job: BilledJob): Promise<void> {
    try {
      if (job.status === 'succeeded') {
        await settleHold(this.services, this.heldCharge(job));
        await this.jobs.setBilling(job.id, 'charged');
      } else {
        await releaseHold(this.services, job.id);
        await this.jobs.setBilling(job.id, 'released');
      }
      this.options.holds.delete(job.id);
    } catch (err) {
      // Left held: the reconciler tries again.
      this.logger.warn({ err, job_id: job.id }, 'could not bill a job yet');
    }
  }

  /** Finishes billing left undone, drops this server's holds of jobs billed elsewhere, and (on one server) removes expired jobs. */
  async reconcile(now = this.now()): Promise<void> {
    for (const job of await this.jobs.unbilled(100)) await this.bill(job);
    for (const id of [...this.options.holds]) {
      // A job running here holds its hold until its own run charges or releases it.
      if (this.runs.has(id)) continue;
      const job = await this.jobs.get(id);
      if (!job || job.billing !== 'held') {
        await releaseHold(this.services, id).catch(() => {});
        this.options.holds.delete(id);
      }
    }
    if (!(await this.jobs.lead('jobs.sweeper', this.owner, now, Math.max(this.config.pollMs * 20, 30_000)))) return;
    // The row goes only once its blobs are gone: a storage that fails here leaves both for the next sweep.
    for (const job of await this.jobs.expired(new Date(now).toISOString(), 100)) {
      await removeJobFiles(this.blobs, job.id);
      await this.jobs.delete(job.id);
      this.logger.info({ job_id: job.id }, 'expired job removed');
    }
  }
}

type BilledJob = Pick<JobRecord, 'id' | 'orgId' | 'keyId' | 'model' | 'characters' | 'status' | 'spec'>;

/** Resolves after `ms`, or at once when `signal` fires. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
