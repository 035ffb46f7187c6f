/** @module synthesis/text-map.test — engine text mapped back to the transcript: copies by character, expansions whole. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MappedText } from './text-map.js';

it('copied text maps character by character; an expansion maps to its whole original; inserted text to nothing', () => {
  // Transcript: "Hi NASA, ok" → engine text "Hi N A S A, ok" with a pause inserted before "ok".
  const mapped = new MappedText().copy('Hi ', 0).replace('N A S A', 3, 7).copy(',', 7).insert(' —').copy(' ok', 8);
  assert.equal(mapped.text, 'Hi N A S A, — ok');
  assert.deepEqual(mapped.toSource(0, 2), { from: 0, to: 2 });
  assert.deepEqual(mapped.toSource(5, 6), { from: 3, to: 7 }, 'one letter of the alias stands for the whole word');
  assert.deepEqual(mapped.toSource(3, 11), { from: 3, to: 8 });
  assert.equal(mapped.toSource(12, 13), null, 'inserted text came from nowhere');
  assert.deepEqual(mapped.toSource(14, 16), { from: 9, to: 11 });
  // A zero-length range still names the character it stands on.
  assert.deepEqual(mapped.toSource(1, 1), { from: 1, to: 2 });
});

it('appending part of another mapped text keeps where it came from', () => {
  const first = new MappedText().copy('ab', 10).replace('XYZ', 12, 13).copy('cd', 13);
  const part = new MappedText().append(first, 1, 6);
  assert.equal(part.text, 'bXYZc');
  assert.deepEqual(part.toSource(0, 1), { from: 11, to: 12 });
  assert.deepEqual(part.toSource(2, 3), { from: 12, to: 13 });
  assert.deepEqual(part.toSource(4, 5), { from: 13, to: 14 });
});
