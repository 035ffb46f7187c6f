/**
 * @module audio/halfband — a streaming 2× interpolator (22050 → 44100, 24000 → 48000, …)
 * on a half-band filter: WAV and MP3 at 44.1 kHz from eSpeak NG's 22,050 Hz.
 *
 * A low-pass cut at exactly half the input rate is zero at every other tap, so the even outputs
 * are the input samples themselves and only the odd ones need a dot product: half the work of a
 * general polyphase filter of the same length, run as WebAssembly SIMD (audio/fir-kernel).
 * 0.27 ms per audio second against 0.59 for Speex at quality 7, measured alone (docs/benchmarks-history.md).
 * The Kaiser-windowed sinc spans 64 input samples: flat within 0.05 dB to 10 kHz for 22,050 Hz
 * input (−0.5 dB at 10.5 kHz), and the images of everything up to 10 kHz, mirrored about
 * 11,025 Hz to 12 kHz and above, at −79 dB or lower. Same contract as the other resamplers:
 * chunk-invariant, time-aligned (output 2n is input n) and exactly 2 × totalIn samples.
 */
import { runFir, runInterleavedS16, type FirStep } from './fir-kernel.js';
import { bessel0 } from './polyphase.js';
import { FirStream } from './fir-stream.js';

/** Taps of the odd phase, in input samples (a multiple of 4: the kernel takes four at a time). */
const TAPS = 64;
const HALF = TAPS / 2;
const KAISER_BETA = 9;

let oddPhase: FirStep | undefined;

/** The odd outputs' taps, one phase stepping one input sample per output. */
function design(): FirStep {
  if (oddPhase) return oddPhase;
  const row = new Float64Array(TAPS);
  const norm = bessel0(KAISER_BETA);
  let sum = 0;
  for (let k = 0; k < TAPS; k++) {
    // Distance in input samples from the odd output (half a sample after input n) to tap k's input.
    const t = HALF - 0.5 - k;
    const w = bessel0(KAISER_BETA * Math.sqrt(Math.max(0, 1 - (t / HALF) ** 2))) / norm;
    row[k] = (Math.sin(Math.PI * t) / (Math.PI * t)) * w;
    sum += row[k];
  }
  // Unity gain at DC, so the odd outputs have the even ones' level.
  const table = new Float32Array(TAPS);
  for (let k = 0; k < TAPS; k++) table[k] = row[k] / sum;
  oddPhase = { table, taps: TAPS, up: 1, adv: 1, rem: 0 };
  return oddPhase;
}

export class HalfbandUpsampler extends FirStream {
  private readonly step = design();

  constructor(inputRate: number) {
    // Silence before the stream for the first odd outputs' left-hand taps, after it for the last ones' right-hand taps.
    super(inputRate, 2 * inputRate, HALF - 1, HALF);
  }

  protected flushLimit(totalIn: number): number {
    return totalIn;
  }

  /**
   * `process`, as 16-bit samples: exactly `floatToInt16(process(input))` (audio/pcm), made in the
   * kernel without the Float32 output and its conversion (the WAV 44.1 kHz path's largest cost).
   */
  processS16(input: Float32Array): Int16Array {
    this.take(input);
    return this.runS16(Infinity);
  }

  /** `flush`, as 16-bit samples (see processS16). */
  flushS16(): Int16Array {
    const limit = this.close();
    return limit === null ? new Int16Array(0) : this.runS16(limit);
  }

  /** Makes every output pair whose taps are all in the buffer, up to input index `limit`. */
  protected run(limit: number): Float32Array {
    const x = this.buf;
    const { first, count } = this.pairs(limit);
    const odd = runFir(this.step, x, first, 0, count);
    const out = new Float32Array(2 * count);
    for (let i = 0, at = first + HALF - 1; i < count; i++) {
      out[2 * i] = x[at + i];
      out[2 * i + 1] = odd[i];
    }
    this.advance(count);
    return out;
  }

  private runS16(limit: number): Int16Array {
    const { first, count } = this.pairs(limit);
    const out = runInterleavedS16(this.step, this.buf, first, first + HALF - 1, count);
    this.advance(count);
    return out;
  }

  /** The pairs the buffer completes up to input `limit`, and where the first one's taps start in it. */
  private pairs(limit: number): { first: number; count: number } {
    const base = this.bufStart;
    // Pair n reads inputs n − HALF + 1 … n + HALF.
    const stop = Math.min(limit, base + this.buf.length - HALF);
    return { first: this.next - HALF + 1 - base, count: Math.max(0, stop - this.next) };
  }

  private advance(count: number): void {
    this.next += count;
    // Keep only what the next pair still needs.
    this.keepFrom(this.next - HALF + 1);
  }
}
