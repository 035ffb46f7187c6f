/**
 * @module engines/pcm16
 * An optional capability next to the `Engine` interface: an engine that
 * makes 16-bit PCM natively may also hand it over as is. The pipeline always
 * takes it when offered, except for pcm_f32le output: for pcm_s16le at the
 * engine's own rate the samples go to the response without a round trip
 * through Float32, and for the other outputs (other rates, G.711, MP3) they
 * become Float32 in the same pass that applies the gain.
 */
import type { Engine, EngineInput, WordTiming } from './engine.js';

export interface Int16Chunk {
  /** Owned by the consumer, like an `EngineChunk`'s samples. */
  samples: Int16Array;
  words?: WordTiming[];
}

export interface Int16Engine extends Engine {
  /**
   * The same synthesis as `synthesize` (same chunks, words, errors and cancellation), with each
   * chunk's samples exactly `floatToInt16` of the Float32 ones.
   */
  synthesizeInt16(input: EngineInput, signal: AbortSignal): AsyncIterable<Int16Chunk>;
}

export function offersInt16(engine: Engine): engine is Int16Engine {
  return typeof (engine as Partial<Int16Engine>).synthesizeInt16 === 'function';
}
