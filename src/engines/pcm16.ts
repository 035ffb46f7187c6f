/**
 * @module engines/pcm16
 * An optional capability next to the `Engine` interface: an engine that
 * makes 16-bit PCM natively may also hand it over as is. The pipeline uses it
 * only when the output is pcm_s16le at the engine's own rate and volume 1, so
 * the samples go to the response without a round trip through Float32.
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
