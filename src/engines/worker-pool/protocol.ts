/**
 * @module engines/worker-pool/protocol
 * What the pool (main thread) and its worker threads exchange, whatever the
 * engine: the job envelope, the chunk/end/failed replies, and the layout of
 * the small shared control block per worker. An engine that blocks its thread
 * cannot read a message while it works, so cancellation and back-pressure go
 * through shared memory that the worker polls between chunks.
 */

/** Int32 slots of the shared control block. */
export const CONTROL = {
  /** Set to 1 by the pool to cancel the current job. */
  cancel: 0,
  /** Units of audio (the engine's own chunks) posted by the worker and not yet taken by the consumer. */
  inFlight: 1,
  /** 1 while the worker waits for its consumer to read (back-pressure), set and cleared by the worker. */
  waiting: 2,
} as const;
export const CONTROL_SLOTS = 3;

import type { StageSpec, StageState } from '../../audio/output-stage.js';

/**
 * Arrays a worker may post; their buffers are transferred, never copied. Samples at the engine's
 * rate, or (Uint8Array) the bytes the job's output stage made of them.
 */
export type Samples = Int16Array | Float32Array | Uint8Array;

/** A job's output stage (audio/output-stage): the worker encodes what the engine makes, from `state` on. */
export interface StageJob {
  spec: StageSpec;
  gain: number;
  state: StageState;
}

/** What a worker script receives as `workerData`. */
export interface PoolWorkerData {
  control: SharedArrayBuffer;
  /** Engine-specific start-up data (model paths and the like). */
  engine: unknown;
}

/** Pool → worker: one job, sent only to an idle worker. */
export interface JobEnvelope<J> {
  type: 'job';
  jobId: number;
  /** Units the worker may post ahead of the consumer before it waits. */
  highWater: number;
  /** The next piece of a request already speaking: its first audio need not go out alone. */
  continuation: boolean;
  job: J;
  /** Present when the worker resamples and encodes the job's audio itself. */
  stage?: StageJob;
}

/** Worker → pool. `R` is what the engine reports when ready, `E` its per-chunk events (words…). */
export type PoolWorkerMessage<R, E, S extends Samples = Samples> =
  | { type: 'ready'; info: R }
  /**
   * `units`: the engine chunks gathered in this message, as counted in `CONTROL.inFlight`; `made`:
   * the samples the engine made for it (more or fewer than `samples` holds when a stage encoded them).
   */
  | { type: 'chunk'; jobId: number; samples: S; events: E[]; units: number; made: number }
  /** `stage`: where the job's output stage ended, for the request's next job. */
  | { type: 'end'; jobId: number; cancelled: boolean; stage?: StageState }
  | { type: 'failed'; jobId: number; message: string };
