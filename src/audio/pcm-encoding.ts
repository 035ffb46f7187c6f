/**
 * @module audio/pcm-encoding — Float32 samples to the bytes of a PCM-style encoding (s16, f32,
 * μ-law, A-law). Stateless and free of any thread's resources, so the encoder (audio/encoder)
 * and the output stage in an engine's worker thread (audio/output-stage) make the same bytes.
 */
import type { Encoding } from './format.js';
import { encodeAlawFloat, encodeMulawFloat } from './g711.js';
import { clipFloat, float32AsBytes, floatToInt16, int16AsBytes } from './pcm.js';

function asBuffer(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/** Float samples → bytes of a PCM-style encoding. Stateless, so chunking never changes the bytes. */
export function encodePcm(encoding: Encoding, samples: Float32Array): Buffer {
  switch (encoding) {
    // The converted arrays are fresh and owned here, so their bytes are sent without another copy.
    case 'pcm_s16le':
      return int16AsBytes(floatToInt16(samples));
    case 'pcm_f32le':
      // Clipped so f32 carries the same signal as the integer encodings (resampler overshoot included).
      return float32AsBytes(clipFloat(samples));
    case 'pcm_mulaw':
      return asBuffer(encodeMulawFloat(samples));
    case 'pcm_alaw':
      return asBuffer(encodeAlawFloat(samples));
    default:
      throw new Error(`unknown encoding: ${String(encoding)}`);
  }
}
