/**
 * @module engines/worker-pool/job
 * One job of the pool from enqueue to its last chunk: the chunks a worker
 * posted and the consumer has not taken, whether more can come, and how long
 * the job has been working as against waiting for its consumer, which is what
 * the job deadline measures (a slow reader must not time out a fast engine).
 */
import type { StageState } from '../../audio/output-stage.js';
import type { Samples, StageJob } from './protocol.js';

/** One message's worth of audio from a worker. */
export interface RawChunk<S extends Samples, E> {
  samples: S;
  events: E[];
  /** Engine chunks in it, as counted against the high-water mark. */
  units: number;
  /** Samples the engine made for it (differs from `samples.length` when a stage encoded them). */
  made: number;
}

export type JobPhase = 'queued' | 'running' | 'done';

export class Job<J, S extends Samples, E> {
  readonly chunks: RawChunk<S, E>[] = [];
  /** `running` while a worker holds the job, which may outlast the consumer's interest in it. */
  phase: JobPhase = 'queued';
  /** No more chunks will be added; `error` (if any) follows the chunks already here. */
  finished = false;
  error: unknown = null;
  /** Where the job's output stage ended (staged jobs that completed). */
  stageState: StageState | undefined;
  /** The consumer left or its signal fired; chunks are dropped from then on. */
  abandoned = false;
  /** Queue deadline while queued; job deadline while running; grace for a cancel that has not landed. */
  timer: NodeJS.Timeout | null = null;
  graceTimer: NodeJS.Timeout | null = null;
  private startedAt = 0;
  /** When it was queued (`performance.now()` ms). */
  readonly queuedAt = performance.now();
  private finishedAt = Infinity;
  /** Time spent with the worker paused on a full consumer buffer. */
  /** Work no listener waits for (`SubmitOptions.background`). */
  background = false;
  private pausedMs = 0;
  private pausedSince: number | null = null;
  private waiters: (() => void)[] = [];

  constructor(
    readonly id: number,
    readonly payload: J,
    /** The next piece of a request already speaking (see WorkerPool.submit). */
    readonly continuation = false,
    /** Working time the request's earlier pieces spent: the job deadline is for the whole request. */
    readonly workedBefore = 0,
    /** When its audio is needed (`performance.now()` ms): the queue serves the earliest first. */
    readonly due = performance.now(),
    /** The output stage the worker runs the job's audio through, if any. */
    readonly stage?: StageJob,
  ) {}

  /** When a worker took it (`performance.now()` ms; 0 while queued). */
  get started(): number {
    return this.startedAt;
  }

  start(): void {
    this.phase = 'running';
    this.startedAt = performance.now();
  }

  /**
   * Called after chunks arrive (`taken` false) or are taken: the worker is paused while
   * `inFlight` ≥ `highWater`. A take restarts the stall clock even when the worker refilled the
   * buffer before `inFlight` was read: the reader did read, so it is not stalled.
   */
  trackPause(inFlight: number, highWater: number, taken = false): void {
    const now = performance.now();
    if (this.pausedSince !== null && (taken || inFlight < highWater)) {
      this.pausedMs += now - this.pausedSince;
      this.pausedSince = null;
    }
    if (inFlight >= highWater) this.pausedSince ??= now;
  }

  /** Milliseconds the worker has spent on this job, not counting pauses for the consumer. */
  workingMs(now = performance.now()): number {
    if (this.startedAt === 0) return 0;
    now = Math.min(now, this.finishedAt);
    const paused = this.pausedMs + (this.pausedSince === null ? 0 : now - this.pausedSince);
    return now - this.startedAt - paused;
  }

  /** Milliseconds the consumer has left a full buffer unread (0 when it is not behind). */
  stalledMs(now = performance.now()): number {
    return this.pausedSince === null ? 0 : now - this.pausedSince;
  }

  /** Ends the job for its consumer (once): with `error`, after the chunks already buffered. */
  finish(error: unknown = null): void {
    if (this.finished) return;
    this.finished = true;
    this.finishedAt = performance.now();
    this.error = error;
    this.notify();
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves at the next chunk, end, or cancellation. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
