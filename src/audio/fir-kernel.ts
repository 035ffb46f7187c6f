/**
 * @module audio/fir-kernel — the polyphase FIR's inner loop as WebAssembly SIMD
 * (`kernels/fir.wat`), four multiply-adds per instruction.
 *
 * The same dot products in plain JavaScript cost 0.55 ms per audio second at 22050 → 8000 Hz,
 * an eighth of what eSpeak NG spends making that second; here they cost ~0.07 ms. The module is
 * compiled once per process from the `fir.wasm` that `npm run build` assembles next to this
 * file. One instance serves every resampler of the thread: a call copies its phase table (when
 * another one is resident) and its input into the instance's memory, runs, and copies the
 * output out, so nothing is shared between calls.
 */
import { readFileSync } from 'node:fs';

/** The part of the WebAssembly JS API used here (the compiler's `lib` has no DOM types). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const { Module, Instance } = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

interface FirExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  fir(tapsPtr: number, taps: number, up: number, adv: number, rem: number, inPtr: number, s: number, p: number, count: number, outPtr: number): void;
  interleave_s16(evenPtr: number, oddPtr: number, count: number, outPtr: number): void;
}

const PAGE = 65536;

let kernel: FirExports | undefined;
/** The phase table now in memory at offset 0 (tables are immutable, so identity is enough). */
let resident: Float32Array | undefined;

function load(): FirExports {
  if (!kernel) {
    const url = new URL('./kernels/fir.wasm', import.meta.url);
    let bytes: Buffer;
    try {
      bytes = readFileSync(url);
    } catch (err) {
      throw new Error(`the filter kernel ${url.pathname} is missing: \`npm run build\` assembles it`, { cause: err });
    }
    kernel = new Instance(new Module(bytes)).exports as FirExports;
  }
  return kernel;
}

export interface FirStep {
  /** Phase p's taps at [p × taps, (p + 1) × taps); `taps` a multiple of 4. */
  table: Float32Array;
  taps: number;
  /** Phases; each output moves the phase by `rem` and the input by `adv` (+1 when the phase wraps). */
  up: number;
  adv: number;
  rem: number;
}

/**
 * `count` outputs: output n is the dot product of phase p's taps with input[s …], starting at
 * input index `s` and phase `p` and stepping as `step` says. The caller guarantees the input
 * holds every sample the last output reads.
 */
export function runFir(step: FirStep, input: Float32Array, s: number, p: number, count: number): Float32Array {
  const out = new Float32Array(count);
  if (count === 0) return out;
  const { k, heap, inPtr, outPtr } = place(step, input, count * 4);
  k.fir(0, step.taps, step.up, step.adv, step.rem, inPtr, s, p, count, outPtr);
  out.set(heap.subarray(outPtr >> 2, (outPtr >> 2) + count));
  return out;
}

/** Room the four-at-a-time loops of `interleave_s16` may read or write past an array's end. */
const SLACK = 16;

/**
 * `count` pairs of 16-bit samples: the even one `input[evenAt + i]`, the odd one output i of
 * `runFir(step, input, s, 0, count)`, both rounded as `floatToInt16` rounds. The half-band
 * interpolator's whole output in one call, without the Float32 arrays in between.
 */
export function runInterleavedS16(step: FirStep, input: Float32Array, s: number, evenAt: number, count: number): Int16Array {
  if (count === 0) return new Int16Array(0);
  const oddBytes = count * 4 + SLACK;
  const { k, heap, inPtr, outPtr: oddPtr } = place(step, input, 2 * oddBytes);
  const pairsPtr = oddPtr + oddBytes;
  k.fir(0, step.taps, step.up, step.adv, step.rem, inPtr, s, 0, count, oddPtr);
  k.interleave_s16(inPtr + evenAt * 4, oddPtr, count, pairsPtr);
  return new Int16Array(heap.buffer, pairsPtr, 2 * count).slice();
}

/**
 * Puts the phase table (unless resident) and `input` in the instance's memory, with `outBytes`
 * for the output after them (the input followed by SLACK bytes); grows the memory as needed.
 */
function place(step: FirStep, input: Float32Array, outBytes: number): { k: FirExports; heap: Float32Array; inPtr: number; outPtr: number } {
  const k = load();
  const inPtr = step.table.byteLength;
  const outPtr = inPtr + input.byteLength + SLACK;
  const needed = outPtr + outBytes;
  // Growing keeps the contents, so a resident table stays resident.
  if (k.memory.buffer.byteLength < needed) k.memory.grow(Math.ceil((needed - k.memory.buffer.byteLength) / PAGE));
  const heap = new Float32Array(k.memory.buffer);
  if (resident !== step.table) {
    heap.set(step.table, 0);
    resident = step.table;
  }
  heap.set(input, inPtr >> 2);
  return { k, heap, inPtr, outPtr };
}
