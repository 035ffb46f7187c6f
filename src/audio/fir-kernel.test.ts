/**
 * @module audio/fir-kernel.test — the SIMD kernel's dot products against plain ones, for every tap
 * count it may get, and its 16-bit pairs against the JavaScript rounding, edge values included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runFir, runInterleavedS16, type FirStep } from './fir-kernel.js';
import { sampleToInt16 } from './pcm.js';

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

describe('runInterleavedS16', () => {
  // Values where rounding, clipping or NaN handling could differ from audio/pcm's.
  const edges = [0, -0, 1, -1, 1.5, -1.5, 2 ** -16, 0.5 / 32767, -0.5 / 32767, 1.5 / 32767, -1.5 / 32767, 32766.5 / 32767, -32766.5 / 32767, NaN, Infinity, -Infinity];

  it('pairs each input sample with its dot product, both rounded as sampleToInt16 rounds, for any count', () => {
    const taps = 8;
    const step: FirStep = { table: noise(taps, 3), taps, up: 1, adv: 1, rem: 0 };
    // Counts around the kernel's four pairs a step; the odd outputs overshoot ±1 now and then.
    for (let count = 0; count <= 13; count++) {
      const input = noise(count + taps + 20, count + 1).map((v) => v * 1.3);
      input.set(edges.slice(0, Math.min(edges.length, input.length)), taps);
      const evenAt = 5;
      const odd = runFir(step, input, 2, 0, count);
      const got = runInterleavedS16(step, input, 2, evenAt, count);
      assert.equal(got.length, 2 * count);
      for (let i = 0; i < count; i++) {
        assert.equal(got[2 * i], sampleToInt16(input[evenAt + i]), `count ${count}, even ${i} (${input[evenAt + i]})`);
        assert.equal(got[2 * i + 1], sampleToInt16(odd[i]), `count ${count}, odd ${i} (${odd[i]})`);
      }
    }
  });

  it('rounds every edge value as sampleToInt16 does', () => {
    // Taps 1, 0, 0, 0 stepping four inputs an output, over each edge followed by three zeros: each
    // odd output is one edge. The even ones are the edges again, after that.
    const step: FirStep = { table: Float32Array.of(1, 0, 0, 0), taps: 4, up: 1, adv: 4, rem: 0 };
    const input = Float32Array.from([...edges.flatMap((value) => [value, 0, 0, 0]), ...edges, 0, 0, 0, 0]);
    const got = runInterleavedS16(step, input, 0, 4 * edges.length, edges.length);
    edges.forEach((value, i) => {
      const want = sampleToInt16(Math.fround(value));
      assert.equal(got[2 * i], want, `even ${value}`);
      assert.equal(got[2 * i + 1], want, `odd ${value}`);
    });
  });
});
