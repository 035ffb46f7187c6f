/**
 * @module audio/resampling
 * What every streaming resampler offers (the Speex one in `resampler.ts` and the FIR streams
 * `polyphase.ts` and `halfband.ts` build on `fir-stream.ts`), apart from any of them so that
 * `fir-stream.ts` implements it without importing the module that chooses between them.
 */

export interface Resampler {
  readonly inputRate: number;
  readonly outputRate: number;
  /** Resamples the next chunk; returns whatever output is ready (filter delay holds some back). */
  process(input: Float32Array): Float32Array;
  /** Drains the filter delay and ends the stream; call once, after the last process(). */
  flush(): Float32Array;
  /** Frees the wasm state; safe to call more than once. */
  destroy(): void;
}
