/** @module audio/resampler.test — streaming Speex resampling: chunk invariance, length, fidelity, alignment. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createResampler } from './resampler.js';

function noise(n: number, seed = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 0x100000000) * 1.6 - 0.8;
  }
  return out;
}

function sine(freq: number, rate: number, n: number, amp = 0.5): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = amp * Math.sin((2 * Math.PI * freq * i) / rate);
  return out;
}

function cat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function oneShot(input: Float32Array, from: number, to: number): Promise<Float32Array> {
  const r = await createResampler(from, to);
  try {
    return cat([r.process(input), r.flush()]);
  } finally {
    r.destroy();
  }
}

const TARGETS = [8000, 16000, 24000, 44100, 48000];

describe('createResampler', () => {
  it('gives identical output whether fed in one piece or in ragged chunks', async () => {
    const input = noise(10007);
    for (const to of TARGETS) {
      const whole = await oneShot(input, 22050, to);
      const r = await createResampler(22050, to);
      const parts: Float32Array[] = [];
      let at = 0;
      let k = 0;
      while (at < input.length) {
        const len = [0, 1, 7, 256, 1000, 2999, 5000][k++ % 7];
        parts.push(r.process(input.subarray(at, at + len)));
        at += len;
      }
      parts.push(r.flush());
      r.destroy();
      assert.deepEqual(cat(parts), whole, `22050 -> ${to}`);
    }
  });

  it('produces exactly round(n * out / in) samples over a stream', async () => {
    for (const to of [...TARGETS, 11025, 22051]) {
      for (const n of [0, 1, 2, 3, 99, 441, 4096, 10007, 30001]) {
        const out = await oneShot(noise(n, n + 3), 22050, to);
        assert.equal(out.length, Math.round((n * to) / 22050), `${n} samples 22050 -> ${to}`);
      }
    }
    // Upstream of eSpeak too: the pipeline may also downsample other engines' 24/48 kHz output.
    assert.equal((await oneShot(noise(48000), 48000, 8000)).length, 8000);
    assert.equal((await oneShot(noise(12345), 24000, 22050)).length, Math.round((12345 * 22050) / 24000));
  });

  for (const to of [8000, 48000]) {
    it(`keeps a 440 Hz sine's frequency and level at 22050 -> ${to}`, async () => {
      const seconds = 2;
      const out = await oneShot(sine(440, 22050, 22050 * seconds), 22050, to);
      assert.ok(out.every((v) => Number.isFinite(v)), 'no NaN/Inf');
      // Skip the edges, where the filter rings against the implicit silence around the clip.
      const mid = out.subarray(Math.round(to * 0.1), Math.round(to * (seconds - 0.1)));
      let crossings = 0;
      for (let i = 1; i < mid.length; i++) if (mid[i - 1] < 0 !== mid[i] < 0) crossings++;
      const expected = 2 * 440 * (mid.length / to);
      assert.ok(Math.abs(crossings - expected) <= 2, `zero crossings ${crossings}, expected ~${expected}`);
      let sum = 0;
      for (const v of mid) sum += v * v;
      const level = Math.sqrt(sum / mid.length);
      assert.ok(Math.abs(level - 0.5 / Math.SQRT2) < 0.005, `rms ${level}`);
    });
  }

  it('keeps output time-aligned with input (no filter delay)', async () => {
    for (const to of TARGETS) {
      const input = new Float32Array(4000);
      input[1500] = 1;
      const out = await oneShot(input, 22050, to);
      let peak = 0;
      for (let i = 1; i < out.length; i++) if (Math.abs(out[i]) > Math.abs(out[peak])) peak = i;
      const expected = (1500 * to) / 22050;
      assert.ok(Math.abs(peak - expected) <= 1, `22050 -> ${to}: impulse at ${peak}, expected ~${expected}`);
    }
  });

  it('passes audio straight through when rates match, returning copies', async () => {
    const r = await createResampler(22050, 22050);
    const input = noise(100);
    const out = r.process(input);
    assert.deepEqual(out, input);
    assert.notEqual(out.buffer, input.buffer);
    assert.equal(r.flush().length, 0);
    r.destroy();
  });

  it('enforces its lifecycle and validates arguments', async () => {
    const r = await createResampler(22050, 16000);
    r.process(noise(500));
    r.flush();
    assert.equal(r.flush().length, 0, 'second flush is empty');
    assert.throws(() => r.process(noise(10)), /flushed/);
    r.destroy();
    r.destroy();
    const d = await createResampler(22050, 16000);
    d.destroy();
    assert.throws(() => d.process(noise(10)), /destroyed/);
    await assert.rejects(createResampler(0, 8000), RangeError);
    await assert.rejects(createResampler(22050, 8000.5), RangeError);
    await assert.rejects(createResampler(22050, 8000, 11), RangeError);
  });

  it('survives many concurrent streams sharing the wasm module', async () => {
    const input = noise(3000);
    const expected = await oneShot(input, 22050, 16000);
    const streams = await Promise.all(Array.from({ length: 20 }, () => createResampler(22050, 16000)));
    const outs = streams.map(() => [] as Float32Array[]);
    for (let at = 0; at < input.length; at += 500) {
      streams.forEach((r, i) => outs[i].push(r.process(input.subarray(at, at + 500))));
    }
    streams.forEach((r, i) => {
      outs[i].push(r.flush());
      r.destroy();
      assert.deepEqual(cat(outs[i]), expected);
    });
  });
});
