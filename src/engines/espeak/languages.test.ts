/** @module engines/espeak/languages.test — a language tag or a profile's name to one of eSpeak's voices. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EspeakVoices, primaryLanguage } from './languages.js';

// As this eSpeak NG build lists them (list_voices), in part.
const LISTED = [
  { name: 'English (America)', identifier: 'gmw/en-US', languages: [{ priority: 2, name: 'en-us' }, { priority: 3, name: 'en' }] },
  { name: 'English (Great Britain)', identifier: 'gmw/en', languages: [{ priority: 2, name: 'en-gb' }, { priority: 2, name: 'en' }] },
  { name: 'English (Received Pronunciation)', identifier: 'gmw/en-GB-x-rp', languages: [{ priority: 5, name: 'en-gb-x-rp' }, { priority: 4, name: 'en-gb' }, { priority: 5, name: 'en' }] },
  { name: 'French (Belgium)', identifier: 'roa/fr-BE', languages: [{ priority: 5, name: 'fr-be' }, { priority: 8, name: 'fr' }] },
  { name: 'French (France)', identifier: 'roa/fr', languages: [{ priority: 5, name: 'fr-fr' }, { priority: 5, name: 'fr' }] },
  { name: 'German', identifier: 'gmw/de', languages: [{ priority: 5, name: 'de' }] },
  { name: 'Spanish (Spain)', identifier: 'roa/es', languages: [{ priority: 5, name: 'es' }] },
  { name: 'Chinese (Mandarin)', identifier: 'sit/cmn', languages: [{ priority: 5, name: 'cmn' }, { priority: 5, name: 'zh-cmn' }, { priority: 5, name: 'zh' }] },
  { name: 'Chinese (Cantonese)', identifier: 'sit/yue', languages: [{ priority: 5, name: 'yue' }, { priority: 8, name: 'zh' }] },
];

test('a tag finds the voice that lists it with the best priority, the whole tag first, then shorter', () => {
  const voices = new EspeakVoices(LISTED);
  const id = (tag: string) => voices.forLanguage(tag)?.identifier ?? null;
  assert.equal(id('fr-fr'), 'roa/fr');
  assert.equal(id('fr'), 'roa/fr');
  assert.equal(id('fr-be'), 'roa/fr-BE');
  assert.equal(id('fr-ca'), 'roa/fr');
  assert.equal(id('es-es'), 'roa/es');
  assert.equal(id('de-de'), 'gmw/de');
  assert.equal(id('zh-cn'), 'sit/cmn');
  assert.equal(id('en-us'), 'gmw/en-US');
  assert.equal(id('en'), 'gmw/en');
  assert.equal(id('tlh'), null);
});

test('a profile names a voice by its identifier, the identifier’s last part or a language', () => {
  const voices = new EspeakVoices(LISTED);
  assert.deepEqual(voices.byName('en-us'), { voice: LISTED[0], byLanguage: false });
  assert.deepEqual(voices.byName('en-gb-x-rp'), { voice: LISTED[2], byLanguage: false });
  assert.deepEqual(voices.byName('gmw/de'), { voice: LISTED[5], byLanguage: false });
  // A per-language voice (espeak-fr-fr) is named by its language, which only the voice list knows.
  assert.deepEqual(voices.byName('fr-fr'), { voice: LISTED[4], byLanguage: true });
  assert.equal(voices.byName('klingon'), null);
  assert.deepEqual(LISTED.map(primaryLanguage), ['en', 'en', 'en', 'fr', 'fr', 'de', 'es', 'cmn', 'yue']);
});
