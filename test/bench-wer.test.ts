/**
 * @module test/bench-wer
 * The intelligibility benchmark's word error rate (`bench/lib/wer.ts`):
 * normalisation, each kind of edit, and corpus-level sums. It lives here
 * because `npm test` runs `dist/src` and `dist/test`, not `dist/bench`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorRate, normalizeWords, sumErrors, wordErrors } from '../bench/lib/wer.js';

test('normalisation lower-cases, strips punctuation and keeps apostrophes inside words', () => {
  assert.deepEqual(normalizeWords("It's easy to tell the depth of a well."), ["it's", 'easy', 'to', 'tell', 'the', 'depth', 'of', 'a', 'well']);
  assert.deepEqual(normalizeWords('The soft cushion broke the man\u2019s fall!'), ['the', 'soft', 'cushion', 'broke', 'the', "man's", 'fall']);
  assert.deepEqual(normalizeWords("  dark-blue, 'quoted'  "), ['dark', 'blue', 'quoted']);
  assert.deepEqual(normalizeWords(''), []);
});

test('identical texts have no errors, whatever their case and punctuation', () => {
  const counts = wordErrors('The birch canoe slid on the smooth planks.', 'the birch canoe slid on the smooth planks');
  assert.deepEqual(counts, { referenceWords: 8, substitutions: 0, deletions: 0, insertions: 0, errors: 0 });
  assert.equal(errorRate(counts), 0);
});

test('substitutions, deletions and insertions are told apart', () => {
  // "birch" → "birds", "canoe" → "can use" (one substitution, one insertion), "smooth" dropped.
  const counts = wordErrors('The birch canoe slid on the smooth planks.', 'the birds can use slid on the planks');
  assert.deepEqual(counts, { referenceWords: 8, substitutions: 2, deletions: 1, insertions: 1, errors: 4 });
  assert.equal(errorRate(counts), 0.5);
  assert.deepEqual(wordErrors('a b c', ''), { referenceWords: 3, substitutions: 0, deletions: 3, insertions: 0, errors: 3 });
  assert.deepEqual(wordErrors('a b', 'x a y b z'), { referenceWords: 2, substitutions: 0, deletions: 0, insertions: 3, errors: 3 });
});

test('the rate can exceed 1, and an empty reference is 0 or Infinity', () => {
  assert.equal(errorRate(wordErrors('one', 'two three four')), 3);
  assert.equal(errorRate(wordErrors('', '')), 0);
  assert.equal(errorRate(wordErrors('', 'noise')), Infinity);
});

test('sums count words across sentences, not a mean of sentence rates', () => {
  const total = sumErrors([wordErrors('one two three four', 'one two three four'), wordErrors('five', 'six')]);
  assert.deepEqual(total, { referenceWords: 5, substitutions: 1, deletions: 0, insertions: 0, errors: 1 });
  assert.equal(errorRate(total), 0.2);
});
