/**
 * @module engines/sentences.test
 * Sentence pieces for in-process engines, and the short head a first sentence
 * is given when it would wait for a busy engine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HEAD_WORDS, sentences, splitHead } from './sentences.js';

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

test('short sentences are not cut, and a cut never leaves an empty rest', () => {
  assert.equal(splitHead('Good morning, how are you?'), null);
  assert.equal(splitHead('One two three four five six'), null);
  const split = splitHead('One two three four five six seven,')!;
  assert.deepEqual([split.head, split.rest], ['One two three four', 'five six seven,']);
  assert.equal(splitHead('a, b c d e f g')!.head, 'a,');
});
