import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WordCollector } from './elevenlabs-engine.js';

test('character alignments become words, a word split across two lines given once', () => {
  const words = new WordCollector();
  const chars = (text: string, from: number) => ({
    characters: Array.from(text),
    character_start_times_seconds: Array.from(text, (_c, i) => from + i * 0.1),
    character_end_times_seconds: Array.from(text, (_c, i) => from + (i + 1) * 0.1),
  });
  assert.deepEqual(words.push(chars('Hi the', 0)), [{ word: 'Hi', start: 0, end: 0.2 }]);
  const next = words.push(chars('re you', 0.6));
  assert.deepEqual(next.map((w) => w.word), ['there']);
  assert.ok(Math.abs(next[0].start - 0.3) < 1e-9);
  assert.ok(Math.abs(next[0].end - 0.8) < 1e-9);
  assert.deepEqual(words.finish().map((w) => w.word), ['you']);
  assert.deepEqual(words.finish(), []);
});
