/**
 * @module test/audio-cache
 * The audio cache end to end, on a real server and real clients: a hit is
 * byte-identical to its miss (audio and word timestamps) on every endpoint
 * and in each family of formats, answers `x-cache: hit` and runs no engine
 * job; the client's and the model's controls keep a request out; a failed
 * or cancelled synthesis keeps nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { engineJobs, fresh } from './helpers/cache.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket, type Event } from './helpers/ws-client.js';
import { eventually } from './helpers/redis.js';

interface SseResult {
  status: number;
  cache: string | null;
  audio: Buffer;
  words: unknown[];
  types: string[];
}

async function sse(server: TestServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<SseResult> {
  const res = await server.post(path, body, headers);
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)) as Event);
  const audio = Buffer.concat(events.flatMap((e) => (e.type === 'chunk' ? [Buffer.from(e.data, 'base64')] : e.type === 'speech.audio.delta' ? [Buffer.from(e.audio, 'base64')] : [])));
  return { status: res.status, cache: res.headers.get('x-cache'), audio, words: events.filter((e) => e.type === 'timestamps').map((e) => e.word_timestamps), types: events.map((e) => e.type) };
}

async function bytes(server: TestServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; cache: string | null; audio: Buffer }> {
  const res = await server.post(path, body, headers);
  return { status: res.status, cache: res.headers.get('x-cache'), audio: Buffer.from(await res.arrayBuffer()) };
}

async function wsTurn(server: TestServer, message: Record<string, unknown>): Promise<{ audio: Buffer; words: unknown[]; types: string[] }> {
  const socket = await TestSocket.open(server.url);
  try {
    const contextId = randomUUID();
    socket.send({ ...message, context_id: contextId });
    await socket.waitFor((e) => e.context_id === contextId && (e.type === 'done' || e.type === 'error'));
    const events = socket.of(contextId);
    assert.ok(!events.some((e) => e.type === 'error'), JSON.stringify(events.find((e) => e.type === 'error')));
    return {
      audio: Buffer.concat(events.filter((e) => e.type === 'chunk').map((e) => Buffer.from(e.data, 'base64'))),
      words: events.filter((e) => e.type === 'timestamps').map((e) => e.word_timestamps),
      types: events.map((e) => e.type),
    };
  } finally {
    socket.ws.close();
  }
}

describe('audio cache', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const formats = {
    'wav s16 22050': { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
    'raw f32 16000': { container: 'raw', encoding: 'pcm_f32le', sample_rate: 16000 },
    'raw mulaw 8000': { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
    'mp3 44100': { container: 'mp3', sample_rate: 44100, bit_rate: 128000 },
  };

  for (const [name, format] of Object.entries(formats)) {
    // omnivoice streams WAV and raw PCM; MP3 only as a clip.
    for (const stream of format.container === 'mp3' ? [false] : [false, true]) {
      test(`/tts/bytes ${stream ? 'stream' : 'clip'} ${name}: the hit is the miss, byte for byte, and runs no engine job`, async () => {
        const body = ttsBody({ model_id: 'omnivoice', transcript: fresh(), output_format: format, stream });
        const before = engineJobs(server);
        const miss = await bytes(server, '/tts/bytes', body);
        assert.ok(engineJobs(server) > before, 'the miss ran the engine');
        assert.equal(miss.status, 200);
        assert.equal(miss.cache, 'miss');
        const jobs = engineJobs(server);
        const hit = await bytes(server, '/tts/bytes', body);
        assert.equal(hit.status, 200);
        assert.equal(hit.cache, 'hit');
        assert.ok(hit.audio.length > 1000);
        assert.ok(hit.audio.equals(miss.audio), 'byte-identical');
        assert.equal(engineJobs(server), jobs, 'no engine job for a hit');
      });
    }
  }

  for (const [name, format] of Object.entries({ 'raw s16 22050': { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 }, 'raw alaw 8000': { container: 'raw', encoding: 'pcm_alaw', sample_rate: 8000 }, 'raw f32 24000': { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 } })) {
    test(`/tts/sse ${name} with timestamps: the same audio and the same word timestamps, in the same event shapes`, async () => {
      const body = ttsBody({ model_id: 'omnivoice', transcript: fresh('Hello, Doctor Smith. Your appointment is at nine.'), output_format: format, add_timestamps: true });
      const miss = await sse(server, '/tts/sse', body);
      assert.equal(miss.cache, 'miss');
      const hit = await sse(server, '/tts/sse', body);
      assert.equal(hit.cache, 'hit');
      assert.ok(hit.audio.length > 1000 && hit.audio.equals(miss.audio));
      assert.ok(miss.words.length > 0);
      assert.deepEqual(hit.words, miss.words);
      assert.deepEqual(hit.types, miss.types);
    });
  }

  test('/v1/audio/speech: mp3 clip, wav stream and SSE pcm each hit byte for byte', async () => {
    for (const extra of [{ response_format: 'mp3' }, { response_format: 'wav', stream: true }, { response_format: 'pcm', stream_format: 'sse' }]) {
      const body = { model: 'omnivoice', voice: 'sarah', input: fresh(), ...extra };
      const read = extra.stream_format ? sse : bytes;
      const miss = await read(server, '/v1/audio/speech', body);
      assert.equal(miss.status, 200, JSON.stringify(extra));
      assert.equal(miss.cache, 'miss');
      const hit = await read(server, '/v1/audio/speech', body);
      assert.equal(hit.cache, 'hit', JSON.stringify(extra));
      assert.ok(hit.audio.length > 1000 && hit.audio.equals(miss.audio), JSON.stringify(extra));
    }
  });

  test('a whole WebSocket turn hits byte for byte, timestamps included; a turn of several messages is never cached', async () => {
    const transcript = fresh('Thank you for calling. Please hold.');
    const message = { model_id: 'gepard-1.0', voice: { id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 }, add_timestamps: true, transcript };
    const miss = await wsTurn(server, message);
    const jobs = engineJobs(server);
    const hit = await wsTurn(server, message);
    assert.equal(engineJobs(server), jobs, 'no engine job for a hit');
    assert.ok(hit.audio.length > 1000 && hit.audio.equals(miss.audio));
    assert.ok(miss.words.length > 0);
    assert.deepEqual(hit.words, miss.words);
    assert.deepEqual(hit.types, miss.types);
    // The same words over SSE: an HTTP stream and a whole turn share the entry.
    const overSse = await sse(server, '/tts/sse', { ...message, voice: 'sarah' });
    assert.equal(overSse.cache, 'hit');
    assert.ok(overSse.audio.equals(miss.audio));

    const socket = await TestSocket.open(server.url);
    try {
      const before = engineJobs(server);
      const contextId = randomUUID();
      socket.send({ ...message, transcript: transcript.slice(0, 10), continue: true, context_id: contextId });
      socket.send({ ...message, transcript: transcript.slice(10), continue: false, context_id: contextId });
      await socket.waitFor((e) => e.context_id === contextId && e.type === 'done');
      assert.ok(engineJobs(server) > before, 'the engine ran for a turn of several messages');
    } finally {
      socket.ws.close();
    }
  });

  test('Cache-Control: no-store and "cache": false neither read nor keep; a model with cache: false never caches', async () => {
    const body = ttsBody({ transcript: fresh() });
    for (const [headers, extra] of [[{ 'cache-control': 'no-cache, no-store' }, {}], [{}, { cache: false }]] as const) {
      const jobs = engineJobs(server);
      const first = await bytes(server, '/tts/bytes', { ...body, ...extra }, headers);
      assert.equal(first.status, 200);
      assert.equal(first.cache, null);
      assert.ok(engineJobs(server) > jobs);
    }
    // Nothing was kept by those: the first ordinary request is a miss.
    assert.equal((await bytes(server, '/tts/bytes', body)).cache, 'miss');
    assert.equal((await bytes(server, '/tts/bytes', body)).cache, 'hit');
    // And an ordinary request's entry is not read by a no-store one.
    assert.equal((await bytes(server, '/tts/bytes', body, { 'cache-control': 'no-store' })).cache, null);
    const openai = await server.post('/v1/audio/speech', { model: 'gepard-1.0', input: 'x', cache: 'no' });
    assert.equal(openai.status, 400);

    const uncached = await startServer({ config: { models: { 'varying-1': { extends: 'gepard-1.0', cache: false } } } });
    try {
      const varying = ttsBody({ model_id: 'varying-1', transcript: fresh() });
      for (let i = 0; i < 2; i++) assert.equal((await bytes(uncached, '/tts/bytes', varying)).cache, null);
      assert.equal(uncached.app.services.cache!.store.stats().memory.entries, 0);
    } finally {
      await uncached.close();
    }
  });

  test('a cancelled synthesis keeps nothing; the next request is a miss', async () => {
    const body = ttsBody({ transcript: fresh('A long message that takes a while to speak. '.repeat(12)), stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } });
    const res = await server.post('/tts/bytes', body);
    // Read the first bytes, then leave.
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    const cache = server.app.services.cache!.store;
    assert.ok(await eventually(() => cache.inFlight === 0, 5000), 'the flight ended');
    assert.equal((await bytes(server, '/tts/bytes', body)).cache, 'miss');
  });
});
