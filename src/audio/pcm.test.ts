/** @module audio/pcm.test — float/int16 conversion, little-endian byte layout and the gain limiter. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyGain, applyGainInt16, clipFloat, float32ToBytes, floatToInt16, int16ToBytes, int16ToFloat, int16ToFloatWithGain } from './pcm.js';

describe('pcm', () => {
  it('converts float to int16 with clipping, 32767 scale and rounding', () => {
    const f = Float32Array.of(0, 1, -1, 2, -2, 0.5, -0.5, 1 / 32767, 0.4 / 32767, NaN, Infinity, -Infinity);
    assert.deepEqual([...floatToInt16(f)], [0, 32767, -32767, 32767, -32767, 16384, -16383, 1, 0, 0, 32767, -32767]);
    // Round half up, as Math.round: every half step of the scale and its Float32 neighbours.
    const probe = new Float32Array(3 * 65536);
    for (let k = 0; k < 65536; k++) {
      const half = Math.fround((k - 32768 + 0.5) / 32767);
      probe.set([half, half * (1 + 2 ** -23), half * (1 - 2 ** -23)], 3 * k);
    }
    const rounded = floatToInt16(probe);
    probe.forEach((x, i) => {
      const expected = x >= 1 ? 32767 : x <= -1 ? -32767 : Math.round(x * 32767);
      if (rounded[i] !== expected) assert.fail(`${x}: ${rounded[i]}, expected ${expected}`);
    });
  });

  it('inverts int16 → float within one step', () => {
    const s = Int16Array.of(-32768, -32767, -1, 0, 1, 16384, 32767);
    const f = int16ToFloat(s);
    assert.deepEqual([...f.slice(0, 2)], [-1, -1]);
    assert.equal(f[6], 1);
    assert.deepEqual([...floatToInt16(f)], [-32767, -32767, -1, 0, 1, 16384, 32767]);
  });

  it('lays bytes out little endian, without aliasing the input', () => {
    const s = Int16Array.of(1, -2, 0x1234);
    assert.deepEqual([...int16ToBytes(s)], [0x01, 0x00, 0xfe, 0xff, 0x34, 0x12]);
    const f = Float32Array.of(1, -0.5);
    const b = float32ToBytes(f);
    assert.deepEqual([b.readFloatLE(0), b.readFloatLE(4)], [1, -0.5]);
    assert.deepEqual([...b.subarray(0, 4)], [0x00, 0x00, 0x80, 0x3f]);
    b[0] = 0xff;
    assert.equal(f[0], 1, 'input untouched');
    // Views at an offset into a bigger buffer are respected.
    const big = new Int16Array([9, 9, 7, 9]);
    assert.deepEqual([...int16ToBytes(big.subarray(2, 3))], [7, 0]);
  });

  it('the one-pass 16-bit gains equal the two-step paths for every sample value', () => {
    const all = new Int16Array(65536);
    for (let i = 0; i < all.length; i++) all[i] = i - 32768;
    // At gain 1 the pipeline applies no gain (and so no limiter) at all.
    assert.deepEqual(int16ToFloatWithGain(all, 1), int16ToFloat(all));
    for (const gain of [0.5, 0.7943, 1, 1.4125, 3.2]) {
      const float = applyGain(int16ToFloat(all), gain);
      if (gain === 1) {
        assert.deepEqual(applyGainInt16(all, gain), floatToInt16(float));
        continue;
      }
      assert.deepEqual(int16ToFloatWithGain(all, gain), float, `float, gain ${gain}`);
      assert.deepEqual(applyGainInt16(all, gain), floatToInt16(float), `int16, gain ${gain}`);
    }
    assert.throws(() => int16ToFloatWithGain(all, NaN), RangeError);
  });

  it('clips floats to [-1,1] and zeroes NaN', () => {
    assert.deepEqual([...clipFloat(Float32Array.of(1.5, -3, 0.25, NaN))], [1, -1, 0.25, 0]);
  });

  it('scales exactly below the limiter knee', () => {
    const f = Float32Array.of(0.1, -0.3, 0.8, -0.6);
    assert.deepEqual([...applyGain(f, 0.5)], [...Float32Array.of(0.05, -0.15, 0.4, -0.3)]);
    assert.deepEqual([...applyGain(f, 1)], [...f]);
  });

  it('soft-limits loud gain into [-1,1], monotonically and symmetrically', () => {
    const ramp = Float32Array.from({ length: 2001 }, (_, i) => (i - 1000) / 1000);
    const out = applyGain(ramp, 8);
    for (let i = 0; i < out.length; i++) {
      assert.ok(out[i] >= -1 && out[i] <= 1, `${out[i]}`);
      if (i > 0) assert.ok(out[i] >= out[i - 1], 'monotonic');
      assert.ok(out[i] === -out[out.length - 1 - i], 'symmetric');
    }
    assert.ok(out[2000] > 0.99, 'heavy boost approaches full scale');
    // Continuous at the knee: just above it the curve has barely bent.
    const near = applyGain(Float32Array.of(0.91), 1)[0];
    assert.ok(near > 0.909 && near < 0.91, `${near}`);
    assert.deepEqual([...applyGain(Float32Array.of(NaN, Infinity, -Infinity), 2)], [0, 1, -1]);
    assert.throws(() => applyGain(ramp, NaN), RangeError);
  });
});
