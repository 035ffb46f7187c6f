/** @module audio/polyphase.test — the telephony filter's passband, stopband and speed-critical shape. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolyphaseResampler } from './polyphase.js';

/** Level in dB of a full-scale sine at `hz` after 22050 → `to`, away from the edges. */
function gainDb(hz: number, to: number): number {
  const input = new Float32Array(22050);
  for (let i = 0; i < input.length; i++) input[i] = Math.sin((2 * Math.PI * hz * i) / 22050);
  const r = new PolyphaseResampler(22050, to);
  const out = r.process(input);
  let sum = 0;
  const mid = out.subarray(200, out.length - 200);
  for (const v of mid) sum += v * v;
  return 20 * Math.log10(Math.sqrt(sum / mid.length) / Math.SQRT1_2);
}

describe('PolyphaseResampler', () => {
  it('keeps the telephony band flat and stops what would alias into it (22050 -> 8000)', () => {
    for (const hz of [300, 1000, 2000, 3000, 3400]) assert.ok(Math.abs(gainDb(hz, 8000)) < 0.6, `${hz} Hz: ${gainDb(hz, 8000).toFixed(2)} dB`);
    assert.ok(gainDb(4600, 8000) < -35, `4600 Hz (aliases to 3400): ${gainDb(4600, 8000).toFixed(1)} dB`);
    for (const hz of [6000, 8000, 10000]) assert.ok(gainDb(hz, 8000) < -70, `${hz} Hz: ${gainDb(hz, 8000).toFixed(1)} dB`);
  });

  it('scales its band with the output rate (22050 -> 16000)', () => {
    assert.ok(Math.abs(gainDb(6800, 16000)) < 0.6, `6800 Hz: ${gainDb(6800, 16000).toFixed(2)} dB`);
    assert.ok(gainDb(10000, 16000) < -60, `10 kHz: ${gainDb(10000, 16000).toFixed(1)} dB`);
  });
});
