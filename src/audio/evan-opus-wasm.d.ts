/**
 * @module audio/evan-opus-wasm — type declarations for the WebAssembly build of libopus in
 * `@evan/opus` (`wasm/index.js`, which the package's own types do not cover). Only what
 * audio/opus uses: the raw encoder, driven by libopus's CTL numbers.
 */

declare module '@evan/opus/wasm/index.js' {
  export class Encoder {
    constructor(options: { channels: 1 | 2; sample_rate: 8000 | 12000 | 16000 | 24000 | 48000; application: 'voip' | 'audio' | 'restricted_lowdelay' });
    /** libopus's value for a GET request `cmd`; sets it (throwing on a libopus error) when `value` is given. */
    ctl(cmd: number, value?: number): number;
    /** One frame of interleaved little-endian 16-bit samples → one Opus packet (a copy). */
    encode(pcm: ArrayBufferView): Uint8Array;
    /** Frees the encoder's wasm memory; the object is unusable afterwards. */
    drop(): void;
  }
}
