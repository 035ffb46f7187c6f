/**
 * @module test/audio-cache.staleness
 * The audio cache never answers with audio made under other conditions:
 * after a pronunciation-dictionary edit the same request is a miss with the
 * new pronunciation; an engine whose configuration changed (a restart on
 * the same data directory, so the disk tier is still there) misses, while an
 * unchanged restart hits from disk. Voice revisions and model files are
 * covered beside their code (`src/synthesis/cache-entry.test.ts`,
 * `src/engines/fingerprint.test.ts`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fresh } from './helpers/cache.js';
import { startServer, tempDataDir, ttsBody, type TestServer } from './helpers/server.js';

async function speak(server: TestServer, body: unknown) {
  const res = await server.post('/tts/bytes', body);
  assert.equal(res.status, 200);
  return { cache: res.headers.get('x-cache'), audio: Buffer.from(await res.arrayBuffer()) };
}

test('a dictionary edit makes the next request a miss, spoken with the new alias', async () => {
  const server = await startServer();
  try {
    const created = await server.post('/pronunciation-dicts', { name: 'names', items: [{ text: 'Voicegate', alias: 'voice gate' }] });
    assert.equal(created.status, 200);
    const dict = (await created.json()) as { id: string };
    const body = ttsBody({ transcript: fresh('Welcome to Voicegate.'), pronunciation_dict_id: dict.id });
    const first = await speak(server, body);
    assert.equal(first.cache, 'miss');
    assert.equal((await speak(server, body)).cache, 'hit');
    const patched = await fetch(`${server.url}/pronunciation-dicts/${dict.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ text: 'Voicegate', alias: 'the loud speaking gateway of many words' }] }),
    });
    assert.equal(patched.status, 200);
    const edited = await speak(server, body);
    assert.equal(edited.cache, 'miss');
    assert.ok(edited.audio.length > first.audio.length * 1.3, 'spoken with the new, longer alias');
    assert.equal((await speak(server, body)).cache, 'hit');
  } finally {
    await server.close();
  }
});

test('after a restart the disk tier answers; an engine whose configuration changed does not', { timeout: 60_000 }, async () => {
  const dataDir = tempDataDir();
  const body = ttsBody({ transcript: fresh('Kept across a restart.') });
  let server = await startServer({ config: { dataDir } });
  let made: Buffer;
  try {
    const miss = await speak(server, body);
    assert.equal(miss.cache, 'miss');
    made = miss.audio;
  } finally {
    await server.close();
  }
  server = await startServer({ config: { dataDir } });
  try {
    const again = await speak(server, body);
    assert.equal(again.cache, 'hit', 'read back from disk');
    assert.ok(again.audio.equals(made));
  } finally {
    await server.close();
  }
  server = await startServer({ config: { dataDir, engines: { espeak: { type: 'espeak', workers: 1, splitFirstSentence: false } } } });
  try {
    assert.equal((await speak(server, body)).cache, 'miss', 'another engine configuration');
  } finally {
    await server.close();
  }
});
