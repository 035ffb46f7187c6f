/**
 * @module engines/staged
 * An optional capability next to the `Engine` interface: an engine that makes
 * its audio on worker threads may also run the request's output stage there
 * (audio/output-stage: gain, resampling, PCM encoding), so the main thread
 * receives finished bytes. Resampling and G.711 on the event loop cost a
 * 2-core server a tenth of its telephony throughput (docs/benchmarks-history.md); on the
 * worker they cost the worker's core the same work without the hand-off.
 */
import type { StageSpec, StageState } from '../audio/output-stage.js';
import type { Engine, EngineInput, WordTiming } from './engine.js';

/**
 * A request's output stage as it moves from job to job. The engine reads `state` when it starts
 * each job and writes it back when the job completes, so the next job, on whichever worker,
 * continues the same stream; `gain` is the current segment's.
 */
export interface StageCursor {
  readonly spec: StageSpec;
  gain: number;
  state: StageState;
}

export interface StagedChunk {
  /** Encoded bytes, owned by the consumer; may be empty while the filter holds input back. */
  audio: Uint8Array;
  /** Samples the engine made for these bytes, at its own rate. */
  made: number;
  words?: WordTiming[];
}

export interface StagingEngine extends Engine {
  /**
   * The same synthesis as `synthesize` (same words, errors and cancellation), with the samples run
   * through `OutputStage(stage.spec, stage.state)` under `stage.gain`: the bytes are exactly those
   * of that stage run on this thread. When the iteration ends, `stage.state` is where it stopped.
   */
  synthesizeStaged(input: EngineInput, stage: StageCursor, signal: AbortSignal): AsyncIterable<StagedChunk>;
}

export function offersStaging(engine: Engine): engine is StagingEngine {
  return typeof (engine as Partial<StagingEngine>).synthesizeStaged === 'function';
}
