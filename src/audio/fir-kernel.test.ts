/** @module audio/fir-kernel.test — the SIMD kernel's dot products against plain ones, for every tap count it may get. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runFir, type FirStep } from './fir-kernel.js';

/** A deterministic pseudo-random sequence in [−1, 1). */
function noise(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = state / 2 ** 31 - 1;
  }
  return out;
}

/** The same outputs computed one tap at a time, in doubles. */
function reference(step: FirStep, input: Float32Array, s: number, p: number, count: number): number[] {
  const out: number[] = [];
  for (let n = 0; n < count; n++) {
    let sum = 0;
    for (let k = 0; k < step.taps; k++) sum += step.table[p * step.taps + k] * input[s + k];
    out.push(sum);
    s += step.adv;
    p += step.rem;
    if (p >= step.up) {
      p -= step.up;
      s += 1;
    }
  }
  return out;
}

describe('runFir', () => {
  // Multiples of eight run two accumulators only; the others end with four taps of their own.
  for (const taps of [4, 8, 12, 28, 56, 64]) {
    it(`gives each output's dot product with ${taps} taps, stepping through phases and input`, () => {
      const up = 3;
      const step: FirStep = { table: noise(up * taps, taps), taps, up, adv: 2, rem: 2 };
      const count = 40;
      const input = noise(count * 3 + taps + 8, 7 * taps);
      const got = runFir(step, input, 1, 1, count);
      const want = reference(step, input, 1, 1, count);
      assert.equal(got.length, count);
      for (let n = 0; n < count; n++) assert.ok(Math.abs(got[n] - want[n]) < 1e-5 * taps, `output ${n}: ${got[n]} against ${want[n]}`);
    });
  }
});
