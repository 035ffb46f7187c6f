/**
 * @module synthesis/language.test
 * The order a request's language is decided in: the request's field, then
 * the voice's, then the model's first; a field that is no language tag is
 * refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { BUILTIN_MODELS } from '../models/builtin.js';
import type { Voice } from '../voices/voice.js';
import { decideLanguage, requestedLanguage } from './language.js';

const voice = (language: string) => ({ id: 'v', language }) as Voice;
const model = { ...BUILTIN_MODELS['gepard-1.0'], languages: ['fr'] };

test('the request’s language, else the voice’s, else the model’s first', () => {
  assert.equal(decideLanguage(requestedLanguage('de_DE'), voice('en'), model), 'de-de');
  assert.equal(decideLanguage(requestedLanguage(null), voice('de'), model), 'de');
  assert.equal(decideLanguage(requestedLanguage(''), voice(''), model), 'fr');
  assert.equal(decideLanguage(null, null, { ...model, languages: [] }), 'en');
  // A voice's language outside BCP 47's shape (eSpeak NG's Klingon) is still its own, not the model's.
  assert.equal(decideLanguage(null, voice('piqd'), model), 'piqd');
  assert.equal(decideLanguage(null, voice('not a language!'), model), 'fr');
});

test('a language that is no BCP 47 tag is an invalid_request naming its field', () => {
  assert.throws(() => requestedLanguage('not a tag!', 'language_code'), (err: unknown) => err instanceof ApiError && err.code === 'invalid_request' && /language_code/u.test(err.message));
});
