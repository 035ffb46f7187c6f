import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AudioFile, fadeEdges } from './output.js';
import { codePoints, splitText } from '../../synthesis/split.js';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../audio/wav.js';

const TEXT =
  'The first sentence is short. The second one, which runs on for a while with a clause or two, is rather longer than the first! ' +
  'A third asks a question? And the fourth ends the paragraph.\nA new line starts here and goes on.';

test('pieces stay within the limit, end at sentence boundaries, and keep every word', () => {
  for (const max of [40, 80, 130, 1000]) {
    const pieces = splitText(TEXT, max);
    assert.ok(pieces.every((p) => codePoints(p) <= max), `${max}: ${pieces.map((p) => codePoints(p))}`);
    assert.deepEqual(pieces.join(' ').split(/\s+/), TEXT.trim().split(/\s+/), `${max}: nothing lost or reordered`);
    if (max >= 130) assert.ok(pieces.every((p) => /[.!?]$/.test(p)), `${max}: ${JSON.stringify(pieces)}`);
  }
  assert.deepEqual(splitText(TEXT, 1000), [TEXT.trim()]);
});

test('a clause longer than the limit is cut at spaces, a word longer than it hard; code points, not UTF-16 units', () => {
  assert.deepEqual(splitText('aaaa bbbb cccc dddd', 10), ['aaaa bbbb', 'cccc dddd']);
  assert.deepEqual(splitText('x'.repeat(25), 10), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  const emoji = '😀'.repeat(12);
  assert.deepEqual(splitText(emoji, 10).map(codePoints), [10, 2]);
});

test('pieces are faded at both ends, so joins meet at zero (no click)', async () => {
  const loud = new Float32Array(2400).fill(0.9);
  const faded = fadeEdges(loud.slice(), 24000);
  assert.equal(faded[0], 0);
  assert.ok(Math.abs(faded.at(-1)!) < 0.01);
  assert.equal(faded[1200], Math.fround(0.9));

  const dir = mkdtempSync(join(tmpdir(), 'voicegate-say-'));
  const path = join(dir, 'joined.wav');
  const file = await AudioFile.create(path, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 24000 });
  const piece = (value: number) => Buffer.from(new Int16Array(2400).fill(value).buffer);
  await file.append(piece(30000));
  await file.append(piece(-30000));
  assert.deepEqual(readdirSync(dir).filter((f) => f === 'joined.wav'), [], 'nothing at the real path before commit');
  await file.commit();
  assert.deepEqual(readdirSync(dir), ['joined.wav'], 'the temporary file is gone');
  const wav = parseWav(readFileSync(path));
  const samples = new Int16Array(wav.data.buffer.slice(wav.data.byteOffset, wav.data.byteOffset + wav.data.byteLength));
  assert.equal(samples.length, 4800);
  let maxStep = 0;
  for (let i = 1; i < samples.length; i++) maxStep = Math.max(maxStep, Math.abs(samples[i] - samples[i - 1]));
  assert.ok(maxStep < 600, `largest step ${maxStep} of 60000 without fades`);
});
