/**
 * @module synthesis/split.test
 * `sliceText`: slices within the limit that join back into the exact text,
 * cut at sentence ends, then spaces, never inside a tag or a surrogate pair.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sliceText } from './split.js';

const codePoints = (text: string) => [...text].length;

test('slices join back into the exact text, each within the limit, cut at sentence ends', () => {
  const text = 'One two three.  Four five six!\n\nSeven eight nine? Ten eleven twelve. '.repeat(40);
  const slices = sliceText(text, 100);
  assert.equal(slices.join(''), text);
  assert.ok(slices.every((s) => codePoints(s) <= 100));
  assert.ok(slices.slice(0, -1).every((s) => /[.!?]\s+$|\n+$/.test(s)), slices.join('|'));
});

test('no sentence end: cut at a space; no space: at the limit, never inside a surrogate pair or a tag', () => {
  const words = 'word '.repeat(50);
  assert.ok(sliceText(words, 12).every((s) => s.endsWith(' ')));
  const emoji = '😀'.repeat(25);
  const slices = sliceText(emoji, 10);
  assert.deepEqual(slices.map(codePoints), [10, 10, 5]);
  assert.equal(slices.join(''), emoji);
  const tagged = 'aaaa <break time="1s"/> bbbb cccc';
  for (const max of [8, 12, 20]) {
    for (const slice of sliceText(tagged, max)) assert.ok(!/<[^>]*$/.test(slice), slice);
    assert.equal(sliceText(tagged, max).join(''), tagged);
  }
});

test('a text within the limit is one slice; an empty text none', () => {
  assert.deepEqual(sliceText('Short.', 100), ['Short.']);
  assert.deepEqual(sliceText('', 100), []);
});
