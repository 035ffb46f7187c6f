/**
 * @module audio/pcm — conversions between float samples and PCM byte layouts, plus a gain stage.
 *
 * Byte output is always little endian regardless of host, since that is what every format we
 * serve (raw s16le/f32le, WAV) specifies.
 */

import { endianness } from 'node:os';

const HOST_LE = endianness() === 'LE';

/** Float [-1,1] → int16: clip, scale by 32767, round (NaN becomes 0). */
export function floatToInt16(f: Float32Array): Int16Array {
  const out = new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const x = f[i];
    // Written so NaN fails both comparisons and falls through to Math.round → NaN → stored as 0.
    out[i] = x >= 1 ? 32767 : x <= -1 ? -32767 : Math.round(x * 32767);
  }
  return out;
}

/** int16 → float in [-1,1], the inverse scale of floatToInt16 (-32768 maps just below -1, clipped). */
export function int16ToFloat(s: Int16Array): Float32Array {
  const out = new Float32Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const v = s[i] / 32767;
    out[i] = v < -1 ? -1 : v;
  }
  return out;
}

/** int16 samples as little-endian bytes (a fresh Buffer, not a view of the input). */
export function int16ToBytes(s: Int16Array): Buffer {
  if (HOST_LE) return Buffer.from(s.buffer.slice(s.byteOffset, s.byteOffset + s.byteLength));
  const out = Buffer.allocUnsafe(s.length * 2);
  for (let i = 0; i < s.length; i++) out.writeInt16LE(s[i], i * 2);
  return out;
}

/**
 * int16 samples as little-endian bytes, sharing the array's memory where the host is little endian.
 * Only for arrays the caller owns and never changes afterwards (e.g. just converted).
 */
export function int16AsBytes(s: Int16Array): Buffer {
  return HOST_LE ? Buffer.from(s.buffer, s.byteOffset, s.byteLength) : int16ToBytes(s);
}

/** float32 samples as little-endian bytes, sharing memory like int16AsBytes (same ownership rule). */
export function float32AsBytes(f: Float32Array): Buffer {
  return HOST_LE ? Buffer.from(f.buffer, f.byteOffset, f.byteLength) : float32ToBytes(f);
}

/** float32 samples as little-endian IEEE bytes (a fresh Buffer, not a view of the input). */
export function float32ToBytes(f: Float32Array): Buffer {
  if (HOST_LE) return Buffer.from(f.buffer.slice(f.byteOffset, f.byteOffset + f.byteLength));
  const out = Buffer.allocUnsafe(f.length * 4);
  for (let i = 0; i < f.length; i++) out.writeFloatLE(f[i], i * 4);
  return out;
}

/** Hard clip to [-1,1], NaN → 0: float consumers often cast to int without checking range. */
export function clipFloat(f: Float32Array): Float32Array {
  const out = new Float32Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const x = f[i];
    out[i] = x > 1 ? 1 : x < -1 ? -1 : x === x ? x : 0;
  }
  return out;
}

/** Level where the limiter starts bending; everything quieter passes through exactly scaled. */
const KNEE = 0.9;

/**
 * Multiplies by `gain` and soft-limits peaks: samples whose magnitude exceeds KNEE are squashed
 * with a tanh curve that has slope 1 at the knee and approaches (never exceeds) 1, so a boost
 * cannot wrap around or hard-clip audibly. Per-sample and stateless, hence chunking-independent.
 */
export function applyGain(f: Float32Array, gain: number): Float32Array {
  if (!Number.isFinite(gain)) throw new RangeError(`gain must be finite, got ${gain}`);
  const out = new Float32Array(f.length);
  const span = 1 - KNEE;
  for (let i = 0; i < f.length; i++) {
    const y = f[i] * gain;
    if (y > KNEE) out[i] = KNEE + span * Math.tanh((y - KNEE) / span);
    else if (y < -KNEE) out[i] = -KNEE - span * Math.tanh((-y - KNEE) / span);
    else out[i] = y === y ? y : 0;
  }
  return out;
}

/**
 * 16-bit samples to Float32 × `gain` through the same limiter: exactly
 * `applyGain(int16ToFloat(s), gain)` (or `int16ToFloat(s)` at gain 1), in one pass.
 */
export function int16ToFloatWithGain(s: Int16Array, gain: number): Float32Array {
  if (gain === 1) return int16ToFloat(s);
  if (!Number.isFinite(gain)) throw new RangeError(`gain must be finite, got ${gain}`);
  const out = new Float32Array(s.length);
  const span = 1 - KNEE;
  for (let i = 0; i < s.length; i++) {
    const v = s[i] / 32767;
    // Rounded where the two-step path stores a Float32 value: after int16ToFloat.
    const y = Math.fround(v < -1 ? -1 : v) * gain;
    out[i] = y > KNEE ? KNEE + span * Math.tanh((y - KNEE) / span) : y < -KNEE ? -KNEE - span * Math.tanh((-y - KNEE) / span) : y;
  }
  return out;
}

/**
 * 16-bit samples × `gain` through the same limiter, back to 16 bits: exactly
 * `floatToInt16(applyGain(int16ToFloat(s), gain))`, in one pass and without the Float32 arrays.
 */
export function applyGainInt16(s: Int16Array, gain: number): Int16Array {
  if (!Number.isFinite(gain)) throw new RangeError(`gain must be finite, got ${gain}`);
  const out = new Int16Array(s.length);
  const span = 1 - KNEE;
  for (let i = 0; i < s.length; i++) {
    const v = s[i] / 32767;
    // Rounded where the two-step path stores Float32 values: after int16ToFloat and after applyGain.
    const x = Math.fround(v < -1 ? -1 : v) * gain;
    const y = Math.fround(x > KNEE ? KNEE + span * Math.tanh((x - KNEE) / span) : x < -KNEE ? -KNEE - span * Math.tanh((-x - KNEE) / span) : x);
    out[i] = y >= 1 ? 32767 : y <= -1 ? -32767 : Math.round(y * 32767);
  }
  return out;
}
