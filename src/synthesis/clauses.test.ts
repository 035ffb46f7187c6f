/** @module synthesis/clauses.test — clause boundaries for streamed-in text. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { beforeUnfinishedNumber, takeClauses } from './clauses.js';

test('sentences and clauses are taken off the front; the unfinished rest stays', () => {
  assert.deepEqual(takeClauses('Hello there. How are'), { clauses: ['Hello there. '], rest: 'How are' });
  assert.deepEqual(takeClauses('Wait! Really? Yes; fine: ok\nnext'), { clauses: ['Wait! ', 'Really? ', 'Yes; ', 'fine: ', 'ok\n'], rest: 'next' });
  assert.deepEqual(takeClauses('He said "stop." Then'), { clauses: ['He said "stop." '], rest: 'Then' });
});

test('a period without following space is not yet a boundary (it may be 3.14 or an abbreviation in progress)', () => {
  assert.deepEqual(takeClauses('Pi is 3.14'), { clauses: [], rest: 'Pi is 3.14' });
  assert.deepEqual(takeClauses('The end.'), { clauses: [], rest: 'The end.' });
});

test('commas split only long clauses', () => {
  assert.deepEqual(takeClauses('Yes, I see'), { clauses: [], rest: 'Yes, I see' });
  const long = 'When the long clause finally reaches its natural end in the text, ';
  assert.deepEqual(takeClauses(long + 'more'), { clauses: [long], rest: 'more' });
});

test('whitespace-only pieces are not clauses', () => {
  assert.deepEqual(takeClauses('\n\n'), { clauses: [], rest: '' });
});

test('no cut after a title or an abbreviation that does not end a sentence', () => {
  assert.deepEqual(takeClauses('Ask Dr. Smith. Then'), { clauses: ['Ask Dr. Smith. '], rest: 'Then' });
  assert.deepEqual(takeClauses('Fruit, e.g. apples; pears'), { clauses: ['Fruit, e.g. apples; '], rest: 'pears' });
  assert.deepEqual(takeClauses('See No. 5. Done'), { clauses: ['See No. 5. '], rest: 'Done' });
});

test('no cut inside the other languages’ abbreviations, nor after a German ordinal', () => {
  assert.deepEqual(takeClauses('Obst, z. B. Äpfel. Dann', 'de'), { clauses: ['Obst, z. B. Äpfel. '], rest: 'Dann' });
  assert.deepEqual(takeClauses('Le M. Dupont. Puis', 'fr'), { clauses: ['Le M. Dupont. '], rest: 'Puis' });
  assert.deepEqual(takeClauses('Am 4. Mai. Dann', 'de'), { clauses: ['Am 4. Mai. '], rest: 'Dann' });
  assert.deepEqual(takeClauses('Am 4. ', 'de'), { clauses: [], rest: 'Am 4. ' });
  // English keeps its cut after a number that ends a sentence.
  assert.deepEqual(takeClauses('See No. 5. Done', 'en'), { clauses: ['See No. 5. '], rest: 'Done' });
});

test('a number at the end of buffered text may still be arriving', () => {
  assert.equal(beforeUnfinishedNumber('It costs $1,2'), 'It costs '.length);
  assert.equal(beforeUnfinishedNumber('Pi is 3.'), 'Pi is '.length);
  assert.equal(beforeUnfinishedNumber('Pi is 3.14 '), 'Pi is 3.14 '.length);
  assert.equal(beforeUnfinishedNumber('No digits here'), 'No digits here'.length);
});
