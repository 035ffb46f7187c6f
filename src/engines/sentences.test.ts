/**
 * @module engines/sentences.test
 * Sentence pieces for in-process engines, and the short head a first sentence
 * is given when it would wait for a busy engine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HEAD_WORDS, MAX_SENTENCE_CHARS, sentences, sentenceSpans, splitHead } from './sentences.js';

test('text splits into trimmed sentences; a piece without letters or digits is dropped', () => {
  assert.deepEqual([...sentences('Hello there.  How are you? ')], ['Hello there.', 'How are you?']);
  assert.deepEqual([...sentences('... !')], []);
});

test('a head is cut at clause punctuation within the first words, else after a few words', () => {
  assert.deepEqual(splitHead('Thanks for calling, your order has shipped today.'), {
    head: 'Thanks for calling,',
    rest: 'your order has shipped today.',
    atPunctuation: true,
  });
  assert.deepEqual(splitHead('Please hold while I transfer you to the next available agent.'), {
    head: 'Please hold while I',
    rest: 'transfer you to the next available agent.',
    atPunctuation: false,
  });
  assert.equal(splitHead('Please hold while I transfer you to the next available agent.')!.head.split(' ').length, HEAD_WORDS);
  // A closing quote after the comma still ends the clause; a comma late in the sentence does not make the head.
  assert.equal(splitHead('She said "wait," and then she left the room.')!.head, 'She said "wait,"');
  assert.equal(splitHead('One two three four five six seven eight nine, ten eleven.')!.head, 'One two three four');
});

test('betweenWords: false cuts at clause punctuation only', () => {
  assert.equal(splitHead('Thanks for calling, your order has shipped today.', { betweenWords: false })!.head, 'Thanks for calling,');
  assert.equal(splitHead('Please hold while I transfer you to the next available agent.', { betweenWords: false }), null);
  assert.equal(splitHead('One two three four five six seven eight nine, ten eleven.', { betweenWords: false }), null);
});

test('short sentences are not cut, and a cut never leaves an empty rest', () => {
  assert.equal(splitHead('Good morning, how are you?'), null);
  assert.equal(splitHead('One two three four five six'), null);
  const split = splitHead('One two three four five six seven,')!;
  assert.deepEqual([split.head, split.rest], ['One two three four', 'five six seven,']);
  assert.equal(splitHead('a, b c d e f g')!.head, 'a,');
});

const LONG =
  'Thank you for calling the billing department, where every question about your account is welcome; ' +
  'before we begin, please have your account number ready — it is printed at the top of every statement, ' +
  'just below your name and address.';

test('a sentence longer than clauseChars is cut at clause punctuation, each piece within the bound', () => {
  const pieces = [...sentences(LONG, 120)];
  // The last break within the bound ends each piece.
  assert.deepEqual(pieces, [
    'Thank you for calling the billing department, where every question about your account is welcome; before we begin,',
    'please have your account number ready — it is printed at the top of every statement, just below your name and address.',
  ]);
  assert.deepEqual([...sentences(LONG, 70)], [
    'Thank you for calling the billing department,',
    'where every question about your account is welcome; before we begin,',
    'please have your account number ready —',
    'it is printed at the top of every statement,',
    'just below your name and address.',
  ]);
  for (const piece of pieces) assert.ok(piece.length <= 120, piece);
  // Nothing is lost or moved: the pieces are the sentence, cut.
  assert.equal(pieces.join(' '), LONG);
  // Each piece knows where it stands in the text.
  for (const { text, at } of sentenceSpans(`Hello. ${LONG}`, 120)) assert.equal(`Hello. ${LONG}`.slice(at, at + text.length), text);
});

test('the bound cuts only where a speaker pauses: a long clause stays whole, a short first piece is not cut off', () => {
  const unbroken = 'Please hold the line while I transfer you to the next available agent in our customer service team who will help you';
  assert.deepEqual([...sentences(unbroken, 60)], [unbroken]);
  // A comma in the first quarter of the bound would leave a stub: the cut goes to the last break past it.
  assert.deepEqual([...sentences('Yes, I can help with the order you placed last week, and with the refund too.', 60)], [
    'Yes, I can help with the order you placed last week,',
    'and with the refund too.',
  ]);
  // Hyphens inside words are not dashes.
  assert.deepEqual([...sentences('A well-known, long-standing and twenty-four-hour service that never sleeps at all.', 40)], [
    'A well-known,',
    'long-standing and twenty-four-hour service that never sleeps at all.',
  ]);
});

test('sentences within the bound, and every sentence by default, are spoken whole up to the hard bound', () => {
  assert.deepEqual([...sentences(LONG)], [LONG]);
  assert.deepEqual([...sentences('Short, and sweet. Another one.', 20)], ['Short, and sweet.', 'Another one.']);
  // Past MAX_SENTENCE_CHARS a run without clause punctuation is still cut, at a space.
  const wall = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
  const pieces = [...sentences(wall)];
  assert.ok(pieces.length > 1);
  for (const piece of pieces) assert.ok(piece.length <= MAX_SENTENCE_CHARS);
  assert.equal(pieces.join(' '), wall);
});
