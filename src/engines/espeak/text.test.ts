/** @module engines/espeak/text.test — escaping for eSpeak's SSML reader and mapping word events back. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareText, wordAt } from './text.js';

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
