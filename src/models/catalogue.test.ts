/** @module models/catalogue.test — shipped profiles, config overrides and engine binding checks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildModelCatalogue } from './catalogue.js';

const engines = new Set(['espeak', 'tone']);

test('the shipped profiles reproduce the two seed contracts', () => {
  const models = buildModelCatalogue({}, engines);
  const gepard = models.get('gepard-1.0')!;
  assert.equal(gepard.maxTranscriptChars, 2000);
  assert.deepEqual(gepard.clip.containers, ['raw', 'wav']);
  assert.deepEqual(gepard.stream.containers, ['raw']);
  assert.ok(!gepard.clip.encodings.includes('pcm_f32le'));
  const omni = models.get('omnivoice')!;
  assert.equal(omni.maxTranscriptChars, 5000);
  assert.equal(omni.defaultVoice, 'sarah');
  assert.equal(omni.clip.defaultEncoding, 'pcm_s16le');
  assert.equal(omni.clip.defaultMp3BitRate, 128000);
  assert.ok(!omni.stream.containers.includes('mp3'));
});

test('config rebinds engines, overrides fields and defines models by extending one', () => {
  const models = buildModelCatalogue(
    { omnivoice: { engine: 'tone', maxTranscriptChars: 4096 }, 'tts-load': { extends: 'gepard-1.0', engine: 'tone', clip: { sampleRates: [24000] } } },
    engines,
  );
  assert.equal(models.get('omnivoice')!.engine, 'tone');
  assert.equal(models.get('omnivoice')!.maxTranscriptChars, 4096);
  const load = models.get('tts-load')!;
  assert.equal(load.id, 'tts-load');
  assert.deepEqual(load.clip.sampleRates, [24000]);
  assert.deepEqual(load.clip.containers, ['raw', 'wav']);
  assert.deepEqual([...models.boundEngines()].sort(), ['espeak', 'tone']);
});

test('a model bound to an unconfigured engine, or extending an unknown model, stops start-up', () => {
  assert.throws(() => buildModelCatalogue({ omnivoice: { engine: 'gpu-pool' } }, engines), /not configured/);
  assert.throws(() => buildModelCatalogue({ x: { extends: 'nope' } }, engines), /unknown model to extend/);
});
