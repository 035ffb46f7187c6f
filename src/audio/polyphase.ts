/**
 * @module audio/polyphase — a streaming polyphase FIR for downsampling to telephony and
 * wideband rates (≤ 16 kHz), where the Speex resampler is slowest.
 *
 * For ratios like 22050 → 8000 (441:160) Speex falls back to interpolating its filter per
 * sample and costs about half of what eSpeak NG spends making the audio (docs/benchmarks-history.md).
 * Here every phase's taps are precomputed once per rate pair (160 phases × 56 taps for
 * 22050 → 8000), so an output sample is one short dot product, run as WebAssembly SIMD
 * (audio/fir-kernel). The Kaiser-windowed sinc is
 * cut at 0.4875 of the output rate — flat to within 0.5 dB up to 3.4 kHz for 8 kHz output,
 * −40 dB at 4.6 kHz and below −80 dB from 6 kHz: a G.711 channel's own noise floor is
 * ~38 dB. Same contract as the Speex path: chunk-invariant, time-aligned (no filter delay),
 * and exactly round(totalIn × outputRate / inputRate) samples over a stream.
 */
import { runFir, type FirStep } from './fir-kernel.js';
import { FirStream } from './fir-stream.js';

/** Filter half-length in input samples at a 22050 → 8000 ratio; it scales with the ratio. */
const HALF_TAPS_PER_RATIO = 28 / (22050 / 8000);
const CUTOFF = 0.4875;
const KAISER_BETA = 7;

/** The filter of one rate pair; its `FirStep` fields are what the kernel runs. */
interface Design extends FirStep {
  /** Output steps per `down` input samples (the ratio reduced by its gcd). */
  up: number;
  down: number;
  /** Taps per phase, a multiple of 4 (the kernel takes four at a time). */
  taps: number;
  half: number;
}

const designs = new Map<string, Design>();

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Modified Bessel function of the first kind, order 0 (for the Kaiser window). */
export function bessel0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 40; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}

function design(inputRate: number, outputRate: number): Design {
  const key = `${inputRate}>${outputRate}`;
  const cached = designs.get(key);
  if (cached) return cached;
  const g = gcd(inputRate, outputRate);
  const up = outputRate / g;
  const down = inputRate / g;
  const half = Math.max(8, Math.ceil((HALF_TAPS_PER_RATIO * inputRate) / outputRate / 2) * 2);
  const taps = 2 * half;
  const fc = (CUTOFF * outputRate) / inputRate; // cycles per input sample
  const table = new Float32Array(up * taps);
  const norm = bessel0(KAISER_BETA);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    const row = new Float64Array(taps);
    for (let k = 0; k < taps; k++) {
      // Distance in input samples from the output instant to the tap's input sample.
      const t = k - half + 1 - p / up;
      const w = Math.abs(t) >= half ? 0 : bessel0(KAISER_BETA * Math.sqrt(1 - (t / half) ** 2)) / norm;
      const s = t === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * t) / (Math.PI * t);
      row[k] = s * w;
      sum += row[k];
    }
    // Unity gain at DC for every phase, so a phase never changes the level.
    for (let k = 0; k < taps; k++) table[p * taps + k] = row[k] / sum;
  }
  const made = { up, down, taps, half, table, adv: Math.floor(down / up), rem: down % up };
  designs.set(key, made);
  return made;
}

export class PolyphaseResampler extends FirStream {
  private readonly d: Design;

  constructor(inputRate: number, outputRate: number) {
    const d = design(inputRate, outputRate);
    // Silence before the stream for the first outputs' left-hand taps, after it for the last ones' right-hand taps.
    super(inputRate, outputRate, d.half - 1, d.taps);
    this.d = d;
  }

  protected flushLimit(totalIn: number): number {
    return Math.round((totalIn * this.outputRate) / this.inputRate);
  }

  /** Makes every output whose taps are all in the buffer, up to `limit` outputs in all. */
  protected run(limit: number): Float32Array {
    const { up, down, half } = this.d;
    const x = this.buf;
    const base = this.bufStart;
    const end = base + x.length; // one past the last buffered input index
    // Output j needs inputs floor(j·down/up) − half + 1 … floor(j·down/up) + half.
    let last = Math.floor(((end - half) * up) / down);
    while (last >= 0 && Math.floor((last * down) / up) + half >= end) last--;
    const stop = Math.min(limit, last + 1);
    const count = Math.max(0, stop - this.next);
    const pos = this.next * down;
    const i = Math.floor(pos / up);
    const out = runFir(this.d, x, i - half + 1 - base, pos - i * up, count);
    this.next += count;
    // Keep only what the next output still needs.
    this.keepFrom(Math.floor((this.next * down) / up) - half + 1);
    return out;
  }
}
