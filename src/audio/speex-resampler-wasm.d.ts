/**
 * @module audio/speex-resampler-wasm — type declarations for the untyped emscripten build of the
 * Speex resampler (`@echogarden/speex-resampler-wasm`). Only the exports resampler.ts uses.
 */

declare module '@echogarden/speex-resampler-wasm' {
  /** The emscripten module instance; heap views are replaced when wasm memory grows. */
  export interface SpeexResamplerModule {
    _speex_resampler_init(nbChannels: number, inRate: number, outRate: number, quality: number, errPtr: number): number;
    _speex_resampler_process_float(
      st: number,
      channel: number,
      inPtr: number,
      inLenPtr: number,
      outPtr: number,
      outLenPtr: number,
    ): number;
    _speex_resampler_skip_zeros(st: number): number;
    _speex_resampler_get_input_latency(st: number): number;
    _speex_resampler_destroy(st: number): void;
    _malloc(size: number): number;
    _free(ptr: number): void;
    readonly HEAPF32: Float32Array;
    readonly HEAP32: Int32Array;
    readonly HEAPU32: Uint32Array;
  }
  const factory: (overrides?: Record<string, unknown>) => Promise<SpeexResamplerModule>;
  export default factory;
}

declare module '@echogarden/speex-resampler-wasm/simd' {
  import factory from '@echogarden/speex-resampler-wasm';
  export default factory;
}
