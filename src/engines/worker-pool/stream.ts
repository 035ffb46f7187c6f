/**
 * @module engines/worker-pool/stream
 * The consumer's side of one job: an async iterator over the job's chunks,
 * decoded by the engine. Written as a plain iterator object rather than an
 * async generator so that every way of leaving cancels the job at once: its
 * signal firing (even while nobody is pulling), `return()` — also before the
 * first `next()`, which a generator would skip its `finally` for — and, as a
 * backstop, the iterator being garbage-collected unfinished.
 */
import { channel } from 'node:diagnostics_channel';
import type { StageState } from '../../audio/output-stage.js';
import type { Job, RawChunk } from './job.js';
import type { Samples } from './protocol.js';

/** How an engine turns one job's worker messages into what its consumer receives. */
export interface ChunkDecoder<S extends Samples, E, T> {
  /** One message from the worker, for `made` of the engine's samples; `undefined` skips it. */
  chunk(samples: S, events: E[], made: number): T | undefined;
  /** After the last chunk of a job that completed: an optional final item (e.g. the last word's end). */
  end?(): T | undefined;
}

/** What the stream asks of the pool. */
export interface JobControl<J, S extends Samples, E> {
  /** The consumer took a chunk off the buffer (releases it against the high-water mark). */
  taken(job: Job<J, S, E>, chunk: RawChunk<S, E>): void;
  /** Nobody wants the job any more: drop it from the queue or stop its worker. */
  cancel(job: Job<J, S, E>): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * `voicegate:engine:worker-queue`: a job's wait for a worker, published when its consumer takes its
 * first chunk, so in the consumer's own async context (a subscriber finds the request it serves
 * there). `queuedAt` and `startedAt` are `performance.now()` values.
 */
export interface WorkerQueueWait {
  pool: string;
  queuedAt: number;
  startedAt: number;
  /** The next piece of a request already speaking, or work nobody waits on (a job's segment). */
  continuation: boolean;
  background: boolean;
}

export const workerQueueChannel = channel('voicegate:engine:worker-queue');

/** Cancels jobs whose iterator was dropped unfinished; the held value must not reference the iterator. */
const abandoned = new FinalizationRegistry<() => void>((cancel) => cancel());

export class JobStream<J, S extends Samples, E, T> implements AsyncIterableIterator<T> {
  private closed = false;
  private reported = false;
  private readonly onAbort: () => void;

  constructor(
    private readonly job: Job<J, S, E>,
    private readonly decoder: ChunkDecoder<S, E, T>,
    private readonly signal: AbortSignal,
    private readonly control: JobControl<J, S, E>,
    /** The pool's name, for the queue-wait event. */
    private readonly pool = '',
  ) {
    // Closes over the job and the pool only, so the signal does not keep this iterator alive.
    const cancel = () => control.cancel(job);
    this.onAbort = cancel;
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    abandoned.register(this, cancel, this);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Milliseconds a worker has spent on this job so far, not counting pauses for the consumer. */
  workingMs(): number {
    return this.job.workingMs();
  }

  /** Where a staged job's output stage ended; only once the job has completed. */
  stageState(): StageState {
    const state = this.job.stageState;
    if (!state) throw new Error('the job has no output stage state: it was not staged, or has not completed');
    return state;
  }

  async next(): Promise<IteratorResult<T>> {
    const job = this.job;
    for (;;) {
      if (this.closed) return DONE;
      if (this.signal.aborted) {
        this.close();
        throw this.signal.reason;
      }
      const raw = job.chunks.shift();
      if (raw) {
        if (!this.reported) this.reportWait();
        this.control.taken(job, raw);
        const value = this.decoder.chunk(raw.samples, raw.events, raw.made);
        if (value !== undefined) return { done: false, value };
        continue;
      }
      if (job.finished) {
        this.close();
        if (job.error) throw job.error;
        const tail = this.decoder.end?.();
        return tail === undefined ? DONE : { done: false, value: tail };
      }
      await job.changed();
    }
  }

  /** Once, at the first chunk: how long the job waited for a worker (only while someone listens). */
  private reportWait(): void {
    this.reported = true;
    if (!workerQueueChannel.hasSubscribers) return;
    const job = this.job;
    workerQueueChannel.publish({ pool: this.pool, queuedAt: job.queuedAt, startedAt: job.started, continuation: job.continuation, background: job.background } satisfies WorkerQueueWait);
  }

  async return(): Promise<IteratorResult<T>> {
    this.close();
    return DONE;
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    this.close();
    throw error;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.signal.removeEventListener('abort', this.onAbort);
    abandoned.unregister(this);
    this.control.cancel(this.job);
    this.job.notify();
  }
}
