/** @module synthesis/clauses.test — clause boundaries for streamed-in text. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeClauses } from './clauses.js';

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
