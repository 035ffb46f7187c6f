/**
 * @module audio/g711 — bit-exact ITU-T G.711 μ-law and A-law codecs (telephony formats).
 *
 * Encoding matches sox bit for bit: sox first rounds the 16-bit sample to 14 bits (μ-law) or 13 bits
 * (A-law) — round half up, saturating at the top — and then applies the classic Sun reference
 * encoder (sox_14linear2ulaw / sox_13linear2alaw). Rounding instead of truncating halves the
 * quantisation bias of a plain `>> 2`/`>> 3`. Both steps are folded into 64 KiB tables indexed by
 * the int16 value, built once at load, so encoding is one lookup per sample. The float encoders
 * round each sample to int16 on the way (`sampleToInt16`), so a Float32 chunk is one pass.
 */

import { sampleToInt16 } from './pcm.js';

const SEG_UEND = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
const SEG_AEND = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];
const ULAW_BIAS = 0x84;
const ULAW_CLIP = 8159;

function segment(value: number, table: readonly number[]): number {
  for (let i = 0; i < table.length; i++) if (value <= table[i]) return i;
  return table.length;
}

/** sox_14linear2ulaw: 14-bit two's complement → μ-law byte. */
function linear14ToUlaw(pcm: number): number {
  let mask: number;
  if (pcm < 0) {
    pcm = -pcm;
    mask = 0x7f;
  } else {
    mask = 0xff;
  }
  if (pcm > ULAW_CLIP) pcm = ULAW_CLIP;
  pcm += ULAW_BIAS >> 2;
  const seg = segment(pcm, SEG_UEND);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((pcm >> (seg + 1)) & 0xf)) ^ mask;
}

/** sox_13linear2alaw: 13-bit two's complement → A-law byte. */
function linear13ToAlaw(pcm: number): number {
  let mask: number;
  if (pcm >= 0) {
    mask = 0xd5;
  } else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  const seg = segment(pcm, SEG_AEND);
  if (seg >= 8) return 0x7f ^ mask;
  const aval = (seg << 4) | ((seg < 2 ? pcm >> 1 : pcm >> seg) & 0xf);
  return aval ^ mask;
}

/** sox's SOX_SAMPLE_TO_SIGNED(bits): round half up to `bits`, saturating at the positive end. */
function roundTo(bits: number, s16: number): number {
  const shift = 16 - bits;
  const max = (1 << (bits - 1)) - 1;
  return Math.min(max, (s16 + (1 << (shift - 1))) >> shift);
}

/** Encode tables indexed by int16 + 32768. */
const ULAW_ENC = new Uint8Array(65536);
const ALAW_ENC = new Uint8Array(65536);
for (let s = -32768; s < 32768; s++) {
  ULAW_ENC[s + 32768] = linear14ToUlaw(roundTo(14, s));
  ALAW_ENC[s + 32768] = linear13ToAlaw(roundTo(13, s));
}

/** Standard ITU decoders (sox_ulaw2linear16 / sox_alaw2linear16), as 256-entry tables. */
const ULAW_DEC = new Int16Array(256);
const ALAW_DEC = new Int16Array(256);
for (let b = 0; b < 256; b++) {
  const u = ~b & 0xff;
  const t = (((u & 0x0f) << 3) + ULAW_BIAS) << ((u & 0x70) >> 4);
  ULAW_DEC[b] = u & 0x80 ? ULAW_BIAS - t : t - ULAW_BIAS;

  const a = b ^ 0x55;
  let m = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) m += 8;
  else if (seg === 1) m += 0x108;
  else m = (m + 0x108) << (seg - 1);
  ALAW_DEC[b] = a & 0x80 ? m : -m;
}

export function encodeMulaw(s: Int16Array): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = ULAW_ENC[s[i] + 32768];
  return out;
}

/** Float samples straight to μ-law: `encodeMulaw(floatToInt16(f))` without the Int16 array. */
export function encodeMulawFloat(f: Float32Array): Uint8Array {
  const out = new Uint8Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = ULAW_ENC[sampleToInt16(f[i]) + 32768];
  return out;
}

/** Float samples straight to A-law: `encodeAlaw(floatToInt16(f))` without the Int16 array. */
export function encodeAlawFloat(f: Float32Array): Uint8Array {
  const out = new Uint8Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = ALAW_ENC[sampleToInt16(f[i]) + 32768];
  return out;
}

export function encodeAlaw(s: Int16Array): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = ALAW_ENC[s[i] + 32768];
  return out;
}

export function decodeMulaw(b: Uint8Array): Int16Array {
  const out = new Int16Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = ULAW_DEC[b[i]];
  return out;
}

export function decodeAlaw(b: Uint8Array): Int16Array {
  const out = new Int16Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = ALAW_DEC[b[i]];
  return out;
}

/** Aliases named after the sample type they produce. */
export { decodeMulaw as mulawToInt16, decodeAlaw as alawToInt16 };
