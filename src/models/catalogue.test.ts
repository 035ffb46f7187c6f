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

test('a model that allows opus must list usable opus bit rates and a rate Opus takes', () => {
  const opus = (rules: Record<string, unknown>) => buildModelCatalogue({ x: { extends: 'omnivoice', clip: { containers: ['wav', 'opus'], ...rules } } }, engines);
  const good = opus({ opusBitRates: [32000, 64000], defaultOpusBitRate: 64000 }).get('x')!;
  assert.deepEqual(good.clip.opusBitRates, [32000, 64000]);
  assert.throws(() => opus({}), /model x: clip allows opus but lists no opusBitRates/);
  assert.throws(() => opus({ opusBitRates: [64000, 320000] }), /opusBitRates: opus supports bit rates from 6000 to 256000; 320000 was requested/);
  assert.throws(() => opus({ opusBitRates: [64000], defaultOpusBitRate: 96000 }), /defaultOpusBitRate 96000 is not among opusBitRates/);
  assert.throws(() => opus({ opusBitRates: [64000], sampleRates: [22050, 44100] }), /none of its sampleRates is one Opus takes/);
  assert.throws(
    () => buildModelCatalogue({ x: { extends: 'gepard-1.0', stream: { containers: ['raw', 'opus'] } } }, engines),
    /model x: stream allows opus but lists no opusBitRates/,
  );
});
