/**
 * @module synthesis/pronunciation.test
 * Whole-word, longest-first, one-pass dictionary expansion.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { applyPronunciation, expandForSpeech, MAX_EXPANDED_CHARACTERS } from './pronunciation.js';

test('no items or no text leaves the text unchanged', () => {
  assert.equal(applyPronunciation('Hello NASA', []), 'Hello NASA');
  assert.equal(applyPronunciation('', [{ text: 'a', alias: 'b' }]), '');
});

test('replaces whole words only', () => {
  const items = [{ text: 'cat', alias: 'feline' }];
  assert.equal(applyPronunciation('cat', items), 'feline');
  assert.equal(applyPronunciation('The cat sat.', items), 'The feline sat.');
  assert.equal(applyPronunciation('(cat), "cat"!', items), '(feline), "feline"!');
  assert.equal(applyPronunciation('concatenate cats bobcat cat_1 cat2 2cat', items), 'concatenate cats bobcat cat_1 cat2 2cat');
});

test('every occurrence is replaced', () => {
  assert.equal(applyPronunciation('NASA, NASA and NASA.', [{ text: 'NASA', alias: 'N A S A' }]), 'N A S A, N A S A and N A S A.');
});

test('matching ignores case by default; case_sensitive matches exactly', () => {
  assert.equal(applyPronunciation('nasa Nasa NASA', [{ text: 'NASA', alias: 'x' }]), 'x x x');
  assert.equal(applyPronunciation('nasa Nasa NASA', [{ text: 'NASA', alias: 'x', case_sensitive: false }]), 'x x x');
  assert.equal(applyPronunciation('nasa Nasa NASA', [{ text: 'NASA', alias: 'x', case_sensitive: true }]), 'nasa Nasa x');
});

test('a case-sensitive item beats a caseless one of the same text', () => {
  const items = [
    { text: 'us', alias: 'us-word' },
    { text: 'US', alias: 'United States', case_sensitive: true },
  ];
  assert.equal(applyPronunciation('US and us and Us', items), 'United States and us-word and us-word');
});

test('the longest item wins where items overlap', () => {
  const items = [
    { text: 'New', alias: 'NEW' },
    { text: 'New York', alias: 'the big apple' },
    { text: 'York', alias: 'YORK' },
  ];
  assert.equal(applyPronunciation('New York and New Jersey and York', items), 'the big apple and NEW Jersey and YORK');
  // The longer item does not end on a word boundary here, so the shorter one applies.
  assert.equal(applyPronunciation('New Yorker', items), 'NEW Yorker');
});

test('an alias is never expanded again', () => {
  const items = [
    { text: 'a', alias: 'b c' },
    { text: 'b', alias: 'a' },
  ];
  assert.equal(applyPronunciation('a b', items), 'b c a');
  assert.equal(applyPronunciation('loop', [{ text: 'loop', alias: 'loop loop' }]), 'loop loop');
});

test('regex metacharacters in text are literal, and $ in an alias is kept', () => {
  assert.equal(applyPronunciation('I like C++ and C#.', [{ text: 'C++', alias: 'C plus plus' }, { text: 'C#', alias: 'C sharp' }]), 'I like C plus plus and C sharp.');
  assert.equal(applyPronunciation('a.b axb', [{ text: 'a.b', alias: 'dot' }]), 'dot axb');
  assert.equal(applyPronunciation('(x|y) x', [{ text: '(x|y)', alias: 'group' }]), 'group x');
  assert.equal(applyPronunciation('[a-z] ^$ \\d', [{ text: '[a-z]', alias: 'range' }, { text: '^$', alias: 'anchors' }, { text: '\\d', alias: 'digit' }]), 'range anchors digit');
  assert.equal(applyPronunciation('price', [{ text: 'price', alias: "$& $1 $$ costs $5" }]), "$& $1 $$ costs $5");
});

test('emoji and non-Latin scripts', () => {
  assert.equal(applyPronunciation('Launch 🚀🚀 now', [{ text: '🚀', alias: 'rocket' }]), 'Launch rocketrocket now');
  assert.equal(applyPronunciation('Я люблю Москву. Москва!', [{ text: 'москва', alias: 'Moskva' }]), 'Я люблю Москву. Moskva!');
  assert.equal(applyPronunciation('ΟΔΟΣ οδος', [{ text: 'οδος', alias: 'road' }]), 'road road');
  assert.equal(applyPronunciation('東京 と 東京都', [{ text: '東京', alias: 'Tokyo' }]), 'Tokyo と 東京都');
  assert.equal(applyPronunciation('Straße STRASSE', [{ text: 'straße', alias: 'street' }]), 'street STRASSE');
  assert.equal(applyPronunciation('naïve Naïve', [{ text: 'NAÏVE', alias: 'naive' }]), 'naive naive');
});

test('a combining mark is part of the word', () => {
  assert.equal(applyPronunciation('cafe\u0301 cafe', [{ text: 'cafe', alias: 'coffee' }]), 'cafe\u0301 coffee');
});

test('a text with spaces or punctuation at its edges', () => {
  assert.equal(applyPronunciation('see e.g. this', [{ text: 'e.g.', alias: 'for example' }]), 'see for example this');
  assert.equal(applyPronunciation('Dr. Smith and Dr Who', [{ text: 'Dr.', alias: 'Doctor' }]), 'Doctor Smith and Dr Who');
});

test('a large dictionary with few words present stays fast', () => {
  const items = Array.from({ length: 5000 }, (_, i) => ({ text: `word${i}`, alias: `alias${i}` }));
  const text = 'plain words and word42 and word4999 '.repeat(500);
  const started = performance.now();
  const out = applyPronunciation(text, items);
  assert.ok(out.startsWith('plain words and alias42 and alias4999 '));
  assert.ok(performance.now() - started < 1000);
});

test('expandForSpeech caps the expanded text at 20,000 code points', () => {
  assert.equal(expandForSpeech('NASA', null), 'NASA');
  assert.equal(MAX_EXPANDED_CHARACTERS, 20_000);
  // Code points, not UTF-16 units: each emoji is one.
  const items = [{ text: 'x', alias: '😀'.repeat(2000) }];
  const words = (n: number) => Array(n).fill('x').join(' ');
  assert.equal([...expandForSpeech(words(9), items)].length, 9 * 2000 + 8);
  assert.throws(
    () => expandForSpeech(words(10), items),
    (err: unknown) => err instanceof ApiError && err.code === 'transcript_too_long' && err.status === 400 && /20009 characters.*maximum is 20000/.test(err.message),
  );
});
