/**
 * @module audio/output-stage.test — the output stage makes the bytes the pipeline's resampler and
 * encoder make, however its stream is cut into jobs and however its state travels between them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Encoding } from './format.js';
import { OutputStage, stageSpecFor, type StageSpec } from './output-stage.js';
import { bytesPerSample } from './format.js';
import { applyGain, floatToInt16 } from './pcm.js';
import { encodePcm } from './pcm-encoding.js';
import { createResampler } from './resampler.js';

/** Speech-like test signal: two tones and a little noise, at `rate`. */
function signal(n: number, rate: number): Float32Array {
  const out = new Float32Array(n);
  let s = 7;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = 0.4 * Math.sin((2 * Math.PI * 440 * i) / rate) + 0.2 * Math.sin((2 * Math.PI * 2900 * i) / rate) + 0.05 * (s / 0x100000000 - 0.5);
  }
  return out;
}

/** Cuts `input` into pieces of uneven lengths (1 sample up to a few hundred). */
function pieces<T extends Float32Array | Int16Array>(input: T): T[] {
  const out: T[] = [];
  const lengths = [1, 37, 500, 3, 211, 0, 64, 999];
  for (let at = 0, i = 0; at < input.length; i++) {
    const length = lengths[i % lengths.length];
    out.push(input.subarray(at, at + length) as T);
    at += length;
  }
  return out;
}

/** What the pipeline makes without a stage: gain, then the resampler, then the encoder. */
async function reference(spec: StageSpec, input: Float32Array, gain: number): Promise<Buffer> {
  const scaled = gain === 1 ? input : applyGain(input, gain);
  if (spec.inputRate === spec.outputRate) return encodePcm(spec.encoding, scaled);
  const resampler = await createResampler(spec.inputRate, spec.outputRate);
  try {
    return Buffer.concat([encodePcm(spec.encoding, resampler.process(scaled)), encodePcm(spec.encoding, resampler.flush())]);
  } finally {
    resampler.destroy();
  }
}

/** The stage run piece by piece, with a new stage from a structured clone of the state at every cut. */
function hopping(spec: StageSpec, input: Float32Array | Int16Array, gain: number): Buffer {
  const out: Buffer[] = [];
  let state = new OutputStage(spec).state();
  for (const piece of pieces(input)) {
    const stage = new OutputStage(spec, structuredClone(state));
    out.push(stage.encode(piece, gain));
    state = stage.state();
  }
  out.push(new OutputStage(spec, structuredClone(state)).flush());
  return Buffer.concat(out);
}

const CASES: { name: string; spec: StageSpec }[] = [
  { name: 'μ-law 22050 → 8000 Hz', spec: { inputRate: 22050, outputRate: 8000, encoding: 'pcm_mulaw' } },
  { name: 'A-law 24000 → 8000 Hz', spec: { inputRate: 24000, outputRate: 8000, encoding: 'pcm_alaw' } },
  { name: 's16 22050 → 16000 Hz', spec: { inputRate: 22050, outputRate: 16000, encoding: 'pcm_s16le' } },
  { name: 's16 22050 → 44100 Hz (half-band)', spec: { inputRate: 22050, outputRate: 44100, encoding: 'pcm_s16le' } },
  { name: 'f32 24000 → 8000 Hz', spec: { inputRate: 24000, outputRate: 8000, encoding: 'pcm_f32le' } },
  { name: 'μ-law at the engine rate (no resampling)', spec: { inputRate: 8000, outputRate: 8000, encoding: 'pcm_mulaw' } },
];

describe('OutputStage', () => {
  for (const { name, spec } of CASES) {
    test(`${name}: the pipeline's bytes, whatever the cuts and wherever the state travels`, async () => {
      const input = signal(Math.round(spec.inputRate * 0.37), spec.inputRate);
      for (const gain of [1, 0.7, 2.5]) {
        const expected = await reference(spec, input, gain);
        assert.deepEqual(hopping(spec, input, gain), expected, `gain ${gain}, Float32 input`);
        // A 16-bit engine's samples give the bytes of their Float32 form (int16ToFloat, ÷32767).
        const ints = floatToInt16(input);
        const asFloat = Float32Array.from(ints, (s) => s / 32767);
        assert.deepEqual(hopping(spec, ints, gain), await reference(spec, asFloat, gain), `gain ${gain}, Int16 input`);
        const samples = expected.length / bytesPerSample(spec.encoding);
        assert.equal(samples, Math.round((input.length * spec.outputRate) / spec.inputRate), 'exactly the output rate’s length');
      }
    });
  }

  test('a state is for its own rate pair', () => {
    const state = new OutputStage({ inputRate: 22050, outputRate: 8000, encoding: 'pcm_mulaw' }).state();
    assert.throws(() => new OutputStage({ inputRate: 24000, outputRate: 8000, encoding: 'pcm_mulaw' }, state), RangeError);
  });

  test('a state is a copy: the stage it came from goes on unchanged', () => {
    const spec: StageSpec = { inputRate: 22050, outputRate: 8000, encoding: 'pcm_s16le' };
    const input = signal(3000, 22050);
    const a = new OutputStage(spec);
    a.encode(input.subarray(0, 1000), 1);
    const state = a.state();
    const b = new OutputStage(spec, state);
    state.resampler!.buf.fill(9);
    assert.deepEqual(b.encode(input.subarray(1000), 1), a.encode(input.subarray(1000), 1));
  });
});

describe('stageSpecFor', () => {
  const pcm = (encoding: Encoding, sampleRate: number) => ({ container: 'raw' as const, encoding, sampleRate });
  test('PCM answers whose rates a FIR filter joins (or equal rates) have a stage', () => {
    assert.deepEqual(stageSpecFor(22050, pcm('pcm_mulaw', 8000)), { inputRate: 22050, outputRate: 8000, encoding: 'pcm_mulaw' });
    assert.deepEqual(stageSpecFor(22050, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 44100 }), { inputRate: 22050, outputRate: 44100, encoding: 'pcm_s16le' });
    assert.deepEqual(stageSpecFor(24000, pcm('pcm_f32le', 24000)), { inputRate: 24000, outputRate: 24000, encoding: 'pcm_f32le' });
  });
  test('MP3 and the rate pairs Speex resamples have none', () => {
    assert.equal(stageSpecFor(22050, { container: 'mp3', sampleRate: 44100, bitRate: 128000 }), null);
    assert.equal(stageSpecFor(22050, pcm('pcm_s16le', 24000)), null);
    assert.equal(stageSpecFor(22050, pcm('pcm_s16le', 48000)), null);
  });
});
