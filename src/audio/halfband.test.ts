/** @module audio/halfband.test — the 2× interpolator's passband, image rejection and exact copies. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HalfbandUpsampler } from './halfband.js';
import { floatToInt16 } from './pcm.js';

/** Levels in dB (full scale = 0) of a sine at `hz` and of its image at 22050 − `hz`, after 22050 → 44100. */
function levels(hz: number): { tone: number; image: number } {
  const input = new Float32Array(22050);
  for (let i = 0; i < input.length; i++) input[i] = Math.sin((2 * Math.PI * hz * i) / 22050);
  const out = new HalfbandUpsampler(22050).process(input);
  const from = 400;
  const mid = out.subarray(from, out.length - 400);
  // Correlation with a sine of each frequency: the level of just that component.
  const at = (f: number): number => {
    let c = 0;
    let s = 0;
    for (let i = 0; i < mid.length; i++) {
      const a = (2 * Math.PI * f * (i + from)) / 44100;
      c += mid[i] * Math.cos(a);
      s += mid[i] * Math.sin(a);
    }
    return 20 * Math.log10((2 * Math.hypot(c, s)) / mid.length);
  };
  return { tone: at(hz), image: at(22050 - hz) };
}

describe('HalfbandUpsampler', () => {
  it('keeps speech flat to 10 kHz and its images (12 kHz and above) below -75 dB', () => {
    for (const hz of [100, 1000, 4000, 8000, 9500, 10000]) {
      const { tone, image } = levels(hz);
      assert.ok(Math.abs(tone) < 0.05, `${hz} Hz: ${tone.toFixed(3)} dB`);
      assert.ok(image < -75, `${hz} Hz: image at ${22050 - hz} Hz ${image.toFixed(1)} dB`);
    }
  });

  it('passes every input sample through unchanged as the even outputs, in any chunking', () => {
    const input = new Float32Array(5000);
    for (let i = 0; i < input.length; i++) input[i] = Math.sin(i * 0.37) * 0.8;
    const r = new HalfbandUpsampler(24000);
    assert.equal(r.outputRate, 48000);
    const parts: Float32Array[] = [];
    for (let at = 0, k = 0; at < input.length; k++) {
      const len = [1, 63, 64, 65, 700][k % 5];
      parts.push(r.process(input.subarray(at, at + len)));
      at += len;
    }
    parts.push(r.flush());
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    assert.equal(out.length, 2 * input.length);
    for (let i = 0; i < input.length; i++) assert.equal(out[2 * i], input[i], `output ${2 * i}`);
  });

  it('makes exactly floatToInt16 of its Float32 output as 16-bit samples, in any chunking and across a resume', () => {
    const input = new Float32Array(7000);
    // Loud enough that the filter's overshoot clips now and then.
    for (let i = 0; i < input.length; i++) input[i] = Math.max(-1, Math.min(1, Math.sin(i * 0.91) * 1.2 + Math.sin(i * 0.05) * 0.3));
    const floats = new HalfbandUpsampler(22050);
    let s16 = new HalfbandUpsampler(22050);
    const want: number[] = [];
    const got: number[] = [];
    for (let at = 0, k = 0; at < input.length; k++) {
      const part = input.subarray(at, at + [1, 2, 3, 63, 64, 65, 2206][k % 7]);
      at += part.length;
      want.push(...floatToInt16(floats.process(part)));
      got.push(...s16.processS16(part));
      // Halfway, the 16-bit stream continues on a new upsampler from its state, as a worker's next job would.
      if (k === 20) s16 = new HalfbandUpsampler(22050).resume(s16.snapshot());
    }
    want.push(...floatToInt16(floats.flush()));
    got.push(...s16.flushS16());
    assert.equal(got.length, 2 * input.length);
    assert.deepEqual(got, want);
    assert.equal(s16.flushS16().length, 0);
  });
});
