/** @module engines/espeak/text.test — escaping for eSpeak's SSML reader and mapping word events back. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareText, spanAt, wordAt } from './text.js';

test('markup characters are escaped and control characters become spaces', () => {
  assert.equal(prepareText('a < b & c > d').text, 'a &lt; b &amp; c &gt; d');
  assert.equal(prepareText('x\u0000y\u0007z\r\n').text, 'x y z \n');
});

test('word positions map back to the original code points, across escapes and emoji', () => {
  const original = '😀 Tom & <Jerry>';
  const prepared = prepareText(original);
  const cps = [...prepared.text];
  const at = (word: string) => cps.join('').indexOf(word);
  // eSpeak positions are 1-based code points into the prepared text.
  const position = (word: string) => [...prepared.text.slice(0, at(word))].length + 1;
  assert.equal(wordAt(prepared, position('Tom'), 3), 'Tom');
  assert.equal(wordAt(prepared, position('&lt;Jerry&gt;'), '&lt;Jerry&gt;'.length), '<Jerry>');
  assert.equal(wordAt(prepared, position('&amp;'), 5), '&');
});

test('a head cut at a space ends on a comma that maps to its last word', () => {
  const prepared = prepareText('Please hold while I', { continues: true });
  assert.equal(prepared.text, 'Please hold while I,');
  assert.deepEqual([prepared.sourceIndex.length, prepared.sourceIndex.at(-1)], [20, 18], 'the comma maps to the last character sent');
  // eSpeak may report the comma as part of the word; the word is still the one sent.
  assert.equal(wordAt(prepared, [...'Please hold while '].length + 1, 2), 'I');
  assert.equal(prepareText('Done.').text, 'Done.');
});

test('a phoneme stretch becomes [[…]] whose every code point names the stretch’s whole text', () => {
  const text = 'I say tomato, you say 😀 tomato.';
  const second = text.lastIndexOf('tomato');
  const prepared = prepareText(text, { phonemes: [{ from: 6, to: 12, mnemonics: "t@m'eItoU" }, { from: second, to: second + 6, mnemonics: "t@m'A:toU" }] });
  assert.equal(prepared.text, "I say [[t@m'eItoU]], you say 😀 [[t@m'A:toU]].");
  const cps = [...prepared.text];
  const position = (from: number) => from + 1;
  // eSpeak reports a phoneme word somewhere inside the brackets, with a length of its own.
  const first = cps.indexOf('[');
  assert.equal(wordAt(prepared, position(first + 2), 3), 'tomato');
  assert.deepEqual(spanAt(prepared, position(first + 2), 3), { from: 6, to: 12 });
  const last = cps.lastIndexOf('[') - 1;
  assert.equal(wordAt(prepared, position(last + 2), 1), 'tomato');
  assert.deepEqual(spanAt(prepared, position(last + 2), 1), { from: second, to: second + 6 });
  // The words around keep their places.
  assert.equal(wordAt(prepared, position(cps.join('').indexOf('you')), 3), 'you');
});

test('text is never phoneme input: "[[" is parted', () => {
  const prepared = prepareText("read [[h@l'oU]] as text");
  assert.equal(prepared.text, "read [ [h@l'oU]] as text");
  assert.equal(wordAt(prepared, 7, 1), '[');
});
