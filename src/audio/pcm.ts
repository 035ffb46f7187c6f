/**
 * @module audio/pcm — conversions between float samples and PCM byte layouts, plus a gain stage.
 *
 * Byte output is always little endian regardless of host, since that is what every format we
 * serve (raw s16le/f32le, WAV) specifies.
 */

import { endianness } from 'node:os';

const HOST_LE = endianness() === 'LE';

/**
 * One float sample [-1,1] → int16: clip, scale by 32767, round half up (NaN becomes 0).
 * A Float32 × 32767 is exact in a double, and so is y + 0.5 below 2^15: floor(y + 0.5) is
 * Math.round(y), at a quarter of its cost. NaN fails both comparisons and floors to NaN, which an
 * Int16Array stores as 0 and `| 0` makes 0.
 */
export function sampleToInt16(x: number): number {
  const y = x * 32767;
  return y >= 32767 ? 32767 : y <= -32767 ? -32767 : Math.floor(y + 0.5) | 0;
}

/** Float [-1,1] → int16: clip, scale by 32767, round (NaN becomes 0). */
export function floatToInt16(f: Float32Array): Int16Array {
  const out = new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = sampleToInt16(f[i]);
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
const SPAN = 1 - KNEE;

/** The limiter's curve: slope 1 at the knee, approaching (never exceeding) ±1. */
function limit(y: number): number {
  if (y > KNEE) return KNEE + SPAN * Math.tanh((y - KNEE) / SPAN);
  if (y < -KNEE) return -KNEE - SPAN * Math.tanh((-y - KNEE) / SPAN);
  return y === y ? y : 0;
}

function checkGain(gain: number): void {
  if (!Number.isFinite(gain)) throw new RangeError(`gain must be finite, got ${gain}`);
}

/**
 * Multiplies by `gain` and soft-limits peaks: samples whose magnitude exceeds KNEE are squashed
 * with a tanh curve that has slope 1 at the knee and approaches (never exceeds) 1, so a boost
 * cannot wrap around or hard-clip audibly. Per-sample and stateless, hence chunking-independent.
 */
export function applyGain(f: Float32Array, gain: number): Float32Array {
  checkGain(gain);
  const out = new Float32Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = limit(f[i] * gain);
  return out;
}

/**
 * 16-bit samples to Float32 × `gain` through the same limiter: exactly
 * `applyGain(int16ToFloat(s), gain)` (or `int16ToFloat(s)` at gain 1, where no limiter runs), in one
 * pass. Under a gain each sample is looked up in that gain's table (see gainTable): half the
 * cost of the limiter's arithmetic.
 */
export function int16ToFloatWithGain(s: Int16Array, gain: number): Float32Array {
  if (gain === 1) return int16ToFloat(s);
  checkGain(gain);
  const table = gainTable(floatTables, gain, () => applyGain(int16ToFloat(ALL_INT16), gain));
  const out = new Float32Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = table[s[i] + 32768];
  return out;
}

/**
 * An engine's samples as Float32 under `gain`: 16-bit ones converted in the gain's pass
 * (int16ToFloatWithGain), Float32 ones scaled (or, at gain 1, handed back as they are).
 */
export function floatWithGain(samples: Int16Array | Float32Array, gain: number): Float32Array {
  if (samples instanceof Int16Array) return int16ToFloatWithGain(samples, gain);
  return gain === 1 ? samples : applyGain(samples, gain);
}

/**
 * A 16-bit sample's fate under one gain depends on its value alone, so each gain's 65,536 results
 * are computed once and looked up after that: a request's voice gain × volume repeats across
 * requests, and a lookup costs a sixth of the limiter's arithmetic and its rounding. The last few
 * gains used are kept, as 16-bit results (128 KiB each) and as Float32 ones (256 KiB each).
 */
const GAIN_TABLES = 8;
const int16Tables = new Map<number, Int16Array>();
const floatTables = new Map<number, Float32Array>();
/** Every 16-bit value in order: index i holds i − 32768. */
const ALL_INT16 = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);

function gainTable<T>(tables: Map<number, T>, gain: number, make: () => T): T {
  let table = tables.get(gain);
  if (table) {
    tables.delete(gain); // most recently used last
  } else {
    table = make();
    if (tables.size >= GAIN_TABLES) tables.delete(tables.keys().next().value!);
  }
  tables.set(gain, table);
  return table;
}

/**
 * 16-bit samples × `gain` through the same limiter, back to 16 bits: exactly
 * `floatToInt16(applyGain(int16ToFloat(s), gain))`, in one pass and without the Float32 arrays.
 */
export function applyGainInt16(s: Int16Array, gain: number): Int16Array {
  checkGain(gain);
  const table = gainTable(int16Tables, gain, () => floatToInt16(applyGain(int16ToFloat(ALL_INT16), gain)));
  const out = new Int16Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = table[s[i] + 32768];
  return out;
}
