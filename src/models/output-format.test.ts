/**
 * @module models/output-format.test — Ogg Opus requests against a profile that allows it: the
 * typed format, the profile's default bit rate, and a 400 that says why for everything else.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { BUILTIN_MODELS } from './builtin.js';
import { formatRequestOf, resolveOutputFormat } from './output-format.js';
import type { FormatRules, ModelProfile } from './profile.js';

const OPUS_RULES: FormatRules = {
  containers: ['wav', 'opus'],
  encodings: ['pcm_s16le'],
  sampleRates: [8000, 16000, 22050, 24000, 48000],
  defaultEncoding: 'pcm_s16le',
  mp3BitRates: [],
  opusBitRates: [32000, 64000, 96000, 128000, 192000],
  defaultOpusBitRate: 64000,
};
const model: ModelProfile = { ...BUILTIN_MODELS.omnivoice, id: 'opus-model', clip: OPUS_RULES, stream: { ...OPUS_RULES, defaultOpusBitRate: undefined } };

function refusal(raw: unknown, streaming = false, profile = model): string {
  try {
    resolveOutputFormat(formatRequestOf(raw), profile, streaming);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'invalid_output_format');
    return err.message;
  }
  assert.fail('accepted');
}

describe('resolveOutputFormat: opus', () => {
  it('gives {container: opus, sampleRate, bitRate}, with the profile’s default bit rate', () => {
    for (const bit_rate of [32000, 64000, 96000, 128000, 192000]) {
      assert.deepEqual(resolveOutputFormat(formatRequestOf({ container: 'opus', sample_rate: 48000, bit_rate }), model, false), { container: 'opus', sampleRate: 48000, bitRate: bit_rate });
    }
    assert.deepEqual(resolveOutputFormat(formatRequestOf({ container: 'opus', sample_rate: 8000 }), model, false), { container: 'opus', sampleRate: 8000, bitRate: 64000 });
    assert.deepEqual(resolveOutputFormat(formatRequestOf({ container: 'opus', sample_rate: 16000, bit_rate: 32000 }), model, true), { container: 'opus', sampleRate: 16000, bitRate: 32000 });
  });

  it('refuses, saying why: rates Opus does not take, bit rates not listed, an encoding, a model without opus', () => {
    assert.match(refusal({ container: 'opus', sample_rate: 22050 }), /opus does not support a sample rate of 22050 Hz; use one of 8000, 16000, 24000, 48000 with opus-model/);
    assert.match(refusal({ container: 'opus', sample_rate: 44100 }), /sample_rate must be one of 8000, 16000, 22050, 24000, 48000/);
    assert.match(refusal({ container: 'opus', sample_rate: 48000, bit_rate: 48000 }), /bit_rate must be one of 32000, 64000, 96000, 128000, 192000; got 48000/);
    assert.match(refusal({ container: 'opus', sample_rate: 48000, bit_rate: '64000' }), /bit_rate must be a number; got "64000"/);
    // The stream rules name no default: a bit rate is required there.
    assert.match(refusal({ container: 'opus', sample_rate: 48000 }, true), /bit_rate must be one of 32000, 64000, 96000, 128000, 192000$/);
    assert.match(refusal({ container: 'opus', encoding: 'pcm_s16le', sample_rate: 48000 }), /encoding is not accepted with container opus/);
    assert.match(refusal({ container: 'wav', sample_rate: 48000, bit_rate: 64000 }), /bit_rate is only accepted with container mp3 or opus/);
    for (const id of ['gepard-1.0', 'omnivoice']) {
      for (const streaming of [false, true]) {
        assert.match(refusal({ container: 'opus', sample_rate: 48000 }, streaming, BUILTIN_MODELS[id]), /container must be one of/);
      }
    }
    const noRates = { ...model, clip: { ...OPUS_RULES, opusBitRates: undefined, defaultOpusBitRate: undefined } };
    assert.match(refusal({ container: 'opus', sample_rate: 48000, bit_rate: 64000 }, false, noRates), /bit_rate must be one of ; got 64000/);
  });
});

describe('formatRequestOf: the native output_format object', () => {
  it('reads each field with its type, and refuses a field of the wrong type by name', () => {
    assert.deepEqual(formatRequestOf({ container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 }), { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 });
    assert.equal(formatRequestOf(undefined), null);
    assert.throws(() => formatRequestOf('wav'), /output_format is required/);
    assert.throws(() => formatRequestOf({ container: 5, sample_rate: 24000 }), /output_format.container must be a string; got number/);
    assert.throws(() => formatRequestOf({ container: 'raw', sample_rate: '24000' }), /output_format.sample_rate must be a number; got "24000"/);
  });
});
