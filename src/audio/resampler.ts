/**
 * @module audio/resampler — streaming sample-rate conversion: the Speex resampler (wasm),
 * audio/polyphase for downsampling to ≤ 16 kHz, or audio/halfband for doubling the rate.
 *
 * Engines emit audio at their native rate in arbitrary chunk sizes; this converts chunk by chunk
 * with the filter state carried across calls, so chunked output is identical to one-shot output and
 * the whole stream ends up exactly round(totalIn * outputRate / inputRate) samples long.
 */

import type { SpeexResamplerModule } from '@echogarden/speex-resampler-wasm';
import type { FirStream } from './fir-stream.js';
import { HalfbandUpsampler } from './halfband.js';
import { PolyphaseResampler } from './polyphase.js';
import type { Resampler } from './resampling.js';

export type { Resampler };

/** Input samples handed to wasm per call, so a huge chunk never needs a huge heap buffer. */
const PIECE = 4096;
/** Zeros fed per extra step when the latency flush falls a sample or two short of the target. */
const PAD_STEP = 32;

let speexModule: Promise<SpeexResamplerModule> | undefined;

/** Loads the wasm module once per process; the SIMD build when the runtime accepts it. */
function loadSpeex(): Promise<SpeexResamplerModule> {
  speexModule ??= (async () => {
    try {
      const simd = await import('@echogarden/speex-resampler-wasm/simd');
      return await simd.default();
    } catch {
      const plain = await import('@echogarden/speex-resampler-wasm');
      return await plain.default();
    }
  })().catch((err: unknown) => {
    speexModule = undefined; // let a later call retry rather than caching the failure forever
    throw err;
  });
  return speexModule;
}

interface WasmHandles {
  mod: SpeexResamplerModule;
  st: number;
  /** One allocation: [inLen u32][outLen u32][input f32 × PIECE][output f32 × outCap]. */
  block: number;
}

/** Safety net for callers that drop a resampler without destroy() (e.g. an aborted request). */
const leakGuard = new FinalizationRegistry<WasmHandles>((h) => freeHandles(h));

function freeHandles(h: WasmHandles): void {
  h.mod._speex_resampler_destroy(h.st);
  h.mod._free(h.block);
}

function concat(parts: Float32Array[], total: number): Float32Array {
  if (parts.length === 1) return parts[0];
  const out = new Float32Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function checkRate(name: string, rate: number): void {
  if (!Number.isInteger(rate) || rate <= 0 || rate > 0xffffffff) {
    throw new RangeError(`${name} must be a positive integer, got ${rate}`);
  }
}

class PassthroughResampler implements Resampler {
  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
  ) {}
  process(input: Float32Array): Float32Array {
    return input.slice(); // a copy, so callers can treat every result as their own
  }
  flush(): Float32Array {
    return new Float32Array(0);
  }
  destroy(): void {}
}

class SpeexResampler implements Resampler {
  private handles: WasmHandles | null;
  private readonly outCap: number;
  private totalIn = 0;
  private totalOut = 0;
  private flushed = false;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
    handles: WasmHandles,
    outCap: number,
  ) {
    this.handles = handles;
    this.outCap = outCap;
    leakGuard.register(this, handles, this);
  }

  process(input: Float32Array): Float32Array {
    if (this.flushed) throw new Error('resampler already flushed');
    this.totalIn += input.length;
    const out = this.feed(input, input.length);
    this.totalOut += out.length;
    return out;
  }

  flush(): Float32Array {
    if (this.flushed) return new Float32Array(0);
    this.flushed = true;
    const target = Math.round((this.totalIn * this.outputRate) / this.inputRate);
    const h = this.live();
    // The filter holds back input_latency samples; pushing that many zeros releases them.
    const parts = [this.feed(null, h.mod._speex_resampler_get_input_latency(h.st))];
    let have = this.totalOut + parts[0].length;
    // Fractional phase can leave the stream a sample short; a few more zeros settle it.
    for (let guard = 0; have < target && guard < 64; guard++) {
      const more = this.feed(null, PAD_STEP);
      parts.push(more);
      have += more.length;
    }
    const tail = concat(parts, have - this.totalOut);
    const keep = Math.max(0, Math.min(tail.length, target - this.totalOut));
    this.totalOut += keep;
    return tail.slice(0, keep);
  }

  destroy(): void {
    if (!this.handles) return;
    leakGuard.unregister(this);
    freeHandles(this.handles);
    this.handles = null;
  }

  private live(): WasmHandles {
    if (!this.handles) throw new Error('resampler destroyed');
    return this.handles;
  }

  /** Runs `count` samples (from `src`, or zeros when null) through the filter in PIECE-sized steps. */
  private feed(src: Float32Array | null, count: number): Float32Array {
    const { mod, st, block } = this.live();
    const inLenPtr = block;
    const outLenPtr = block + 4;
    const inPtr = block + 8;
    const outPtr = inPtr + PIECE * 4;
    const parts: Float32Array[] = [];
    let total = 0;
    let offset = 0;
    while (offset < count) {
      const n = Math.min(PIECE, count - offset);
      // Heap views are re-read on every use: they are replaced whenever wasm memory grows.
      const heapIn = mod.HEAPF32.subarray(inPtr >> 2, (inPtr >> 2) + n);
      if (src) heapIn.set(src.subarray(offset, offset + n));
      else heapIn.fill(0);
      mod.HEAPU32[inLenPtr >> 2] = n;
      mod.HEAPU32[outLenPtr >> 2] = this.outCap;
      const rc = mod._speex_resampler_process_float(st, 0, inPtr, inLenPtr, outPtr, outLenPtr);
      if (rc !== 0) throw new Error(`speex_resampler_process_float failed with code ${rc}`);
      const consumed = mod.HEAPU32[inLenPtr >> 2];
      const produced = mod.HEAPU32[outLenPtr >> 2];
      if (consumed === 0 && produced === 0) throw new Error('speex resampler made no progress');
      if (produced > 0) {
        parts.push(mod.HEAPF32.slice(outPtr >> 2, (outPtr >> 2) + produced));
        total += produced;
      }
      offset += consumed;
    }
    return parts.length === 0 ? new Float32Array(0) : concat(parts, total);
  }
}

/** Downsampling to this rate or below goes through the precomputed polyphase filter (audio/polyphase). */
const POLYPHASE_MAX_OUTPUT = 16000;

/**
 * The FIR resampler for a rate pair, or null where Speex is used: downsampling to ≤ 16 kHz
 * (polyphase) and doubling the rate (half-band). Made synchronously, on any thread, and its
 * state can be carried from one thread to another (audio/fir-stream).
 */
export function createFirResampler(inputRate: number, outputRate: number): FirStream | null {
  checkRate('inputRate', inputRate);
  checkRate('outputRate', outputRate);
  if (!firResamples(inputRate, outputRate)) return null;
  return outputRate === 2 * inputRate ? new HalfbandUpsampler(inputRate) : new PolyphaseResampler(inputRate, outputRate);
}

/** Whether a FIR resampler joins the two rates (see createFirResampler). */
export function firResamples(inputRate: number, outputRate: number): boolean {
  return (outputRate < inputRate && outputRate <= POLYPHASE_MAX_OUTPUT) || outputRate === 2 * inputRate;
}

/**
 * Creates a mono resampler. Equal rates give a passthrough that never loads wasm. Downsampling
 * to telephony and wideband rates (≤ 16 kHz) uses the polyphase filter, which is 4–5× cheaper
 * there than Speex; doubling the rate (22050 → 44100) uses the half-band filter, ~2× cheaper
 * than Speex at quality 7; everything else uses Speex. `quality` (0..10, Speex's scale) applies
 * to Speex only; 7 is transparent for speech at modest CPU cost.
 */
export async function createResampler(inputRate: number, outputRate: number, quality = 7): Promise<Resampler> {
  checkRate('inputRate', inputRate);
  checkRate('outputRate', outputRate);
  if (!Number.isInteger(quality) || quality < 0 || quality > 10) {
    throw new RangeError(`quality must be an integer in 0..10, got ${quality}`);
  }
  if (inputRate === outputRate) return new PassthroughResampler(inputRate, outputRate);
  const fir = createFirResampler(inputRate, outputRate);
  if (fir) return fir;

  const mod = await loadSpeex();
  // Room for one full PIECE of output plus slack for the filter's fractional phase.
  const outCap = Math.ceil((PIECE * outputRate) / inputRate) + 64;
  const block = mod._malloc(8 + (PIECE + outCap) * 4);
  if (!block) throw new Error('speex resampler: out of wasm memory');
  const errPtr = block; // reuse the inLen slot for init's error code
  mod.HEAP32[errPtr >> 2] = 0;
  const st = mod._speex_resampler_init(1, inputRate, outputRate, quality, errPtr);
  const err = mod.HEAP32[errPtr >> 2];
  if (!st || err !== 0) {
    if (st) mod._speex_resampler_destroy(st);
    mod._free(block);
    throw new Error(`speex_resampler_init(${inputRate} -> ${outputRate}) failed with code ${err}`);
  }
  // Drop the filter's leading zeros so output is aligned with input from the first sample.
  mod._speex_resampler_skip_zeros(st);
  return new SpeexResampler(inputRate, outputRate, { mod, st, block }, outCap);
}
