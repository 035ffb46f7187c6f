/** @module engines/phonemes.test — IPA and X-SAMPA read into normalised IPA; what is refused, and why. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IPA_SOUNDS, ipaTokens, normalisePhonemes, PhonemeError, xSampaToIpa } from './phonemes.js';

test('the anchors’ examples read as the same IPA in both alphabets', () => {
  // Polly's pecan, in IPA and X-SAMPA; Azure's tomato.
  assert.equal(normalisePhonemes('pɪˈkɑːn', 'ipa'), 'pɪˈkɑːn');
  assert.equal(normalisePhonemes('pI"kA:n', 'x-sampa'), 'pɪˈkɑːn');
  assert.equal(normalisePhonemes('pi.kA:n', 'x-sampa'), 'pikɑːn');
  assert.equal(normalisePhonemes('təˈmeɪtoʊ', 'ipa'), 'təˈmeɪtoʊ');
  assert.equal(normalisePhonemes('t@"meItoU', 'X-SAMPA'), 'təˈmeɪtoʊ');
});

test('spellings clients use are read as the one sound: ɡ and g, ties, ASCII stress and length, ʧ', () => {
  assert.equal(normalisePhonemes("ˈɡʊd", 'ipa'), 'ˈgʊd');
  assert.equal(normalisePhonemes("t͡ʃɜːtʃ", 'ipa'), 'tʃɜːtʃ');
  assert.equal(normalisePhonemes("ʧɜ:ʧ", 'ipa'), 'tʃɜːtʃ');
  assert.equal(normalisePhonemes("pɪ'kɑ:n", 'ipa'), 'pɪˈkɑːn');
  // Aspiration, syllable breaks and length on a sound without a long form change nothing here.
  assert.equal(normalisePhonemes('ˈpʰɪ.kæːn', 'ipa'), 'ˈpɪkæn');
  // Words stay apart, once each, and spaces at the ends go.
  assert.equal(normalisePhonemes('  ˈnjuː   ˈjɔːk ', 'ipa'), 'ˈnjuː ˈjɔːk');
  // Syllabic consonants are sounds of their own.
  assert.deepEqual(ipaTokens('ˈbʌtn̩').map((t) => (t.kind === 'sound' ? t.ipa : t.kind)), ['stress', 'b', 'ʌ', 't', 'n̩']);
});

test('a symbol outside the inventory, an unknown alphabet or no phoneme at all is refused by name', () => {
  const refused = (ph: string, alphabet: string, message: RegExp) => assert.throws(() => normalisePhonemes(ph, alphabet), (err: unknown) => err instanceof PhonemeError && message.test(err.message), `${alphabet} ${ph}`);
  refused('bɔ̃ʒuʁ', 'ipa', /U\+0303/);
  refused('ʁ', 'ipa', /"ʁ" \(U\+0281\)/);
  refused('hello!', 'ipa', /"!"/);
  refused('pecan', 'sapi', /alphabet "sapi" is not supported/);
  refused('ˈ.', 'ipa', /no phoneme/);
  refused('p#kA:n', 'x-sampa', /"#" .* not an X-SAMPA symbol/);
  // An X-SAMPA symbol that is not English's names its IPA.
  refused('R', 'x-sampa', /"ʁ".*as IPA: ʁ/);
});

test('X-SAMPA symbols map as the chart has them, longest first', () => {
  assert.equal(xSampaToIpa('r\\'), 'ɹ');
  assert.equal(xSampaToIpa('@`'), 'ɚ');
  assert.equal(xSampaToIpa('3`'), 'ɝ');
  assert.equal(xSampaToIpa('{'), 'æ');
  assert.equal(xSampaToIpa('tS dZ'), 'tʃ dʒ');
  assert.equal(xSampaToIpa('n='), 'n\u0329');
  // Every sound of the inventory reads back as itself.
  for (const sound of IPA_SOUNDS) assert.equal(normalisePhonemes(sound, 'ipa'), sound);
});
