/**
 * @module test/tts-sse
 * POST /tts/sse through the Cartesia SDK and raw fetch: the reassembled PCM
 * matches /tts/bytes for the same request, events have the documented
 * shapes, errors before the stream are HTTP errors, errors after it opened
 * are an `error` event that ends the body, and billing follows the stream
 * rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Cartesia from '@cartesia/cartesia-js';
import { rms } from '../src/audio/decode.js';
import type { EspeakPool } from '../src/engines/espeak/pool.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
let client: Cartesia;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'tone-check': { extends: 'gepard-1.0', engine: 'tone' } } } });
  org = await newOrg(server, { credits: 1_000_000 });
  client = new Cartesia({ apiKey: org.key, baseURL: server.url, maxRetries: 0 });
});
after(() => server.close());

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } as const;

async function readEvents(response: Response): Promise<Record<string, any>[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      assert.match(block, /^data: /, 'only data lines');
      return JSON.parse(block.slice(6));
    });
}

describe('SSE with the Cartesia SDK', () => {
  test('generateSSE chunks reassemble to the same audio as /tts/bytes', async () => {
    // The tone engine is deterministic, so the two responses can be compared sample for sample.
    const request = { model_id: 'tone-check', transcript: 'Streaming speech, chunk by chunk.', voice: { mode: 'id' as const, id: 'sarah' }, output_format: RAW };
    const stream = await client.tts.generateSSE(request);
    const parts: Buffer[] = [];
    let done = 0;
    for await (const event of stream) {
      if (event.type === 'chunk') parts.push(Buffer.from(event.data!, 'base64'));
      if (event.type === 'done') done++;
    }
    assert.equal(done, 1);
    assert.ok(parts.length > 3, `${parts.length} chunks`);
    const streamed = Buffer.concat(parts);
    const bytes = Buffer.from(await (await server.post('/tts/bytes', request, org.auth)).arrayBuffer());
    assert.equal(streamed.length, bytes.length);
    assert.ok(streamed.equals(bytes), 'same audio');
  });

  test('eSpeak speech over SSE: same length as /tts/bytes within a chunk, real speech', async () => {
    const request = { model_id: 'gepard-1.0', transcript: 'Streaming speech with the embedded engine.', voice: { mode: 'id' as const, id: 'sarah' }, output_format: RAW };
    const parts: Buffer[] = [];
    for await (const event of await client.tts.generateSSE(request)) if (event.type === 'chunk') parts.push(Buffer.from(event.data!, 'base64'));
    const streamed = Buffer.concat(parts);
    const bytes = Buffer.from(await (await server.post('/tts/bytes', request, org.auth)).arrayBuffer());
    assert.ok(Math.abs(streamed.length - bytes.length) <= Math.max(...parts.map((p) => p.length)), `${streamed.length} vs ${bytes.length}`);
    const samples = new Float32Array(streamed.length / 2).map((_, i) => streamed.readInt16LE(i * 2) / 32768);
    assert.ok(rms(samples) > 0.02);
  });

  test('errors before the stream are HTTP errors through the SDK error classes', async () => {
    await assert.rejects(
      client.tts.generateSSE({ model_id: 'gepard-1.0', transcript: 'x'.repeat(2001), voice: { mode: 'id', id: 'sarah' }, output_format: RAW }),
      (err: unknown) => err instanceof Cartesia.BadRequestError && (err.error as any).error_code === 'input_too_long',
    );
    await assert.rejects(
      client.tts.generateSSE({ model_id: 'gepard-1.0', transcript: 'Hi', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 } as any }),
      (err: unknown) => err instanceof Cartesia.BadRequestError && (err.error as any).error_code === 'invalid_output_format',
    );
  });
});

describe('SSE on the wire', () => {
  test('event shapes: chunk (206, step_time, context_id), timestamps, done', async () => {
    const response = await server.post('/tts/sse', ttsBody({ output_format: RAW, add_timestamps: true, context_id: 'ctx-1', transcript: 'Alpha beta gamma.' }), org.auth);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(response.headers.get('x-request-credits'), '17');
    const events = await readEvents(response);
    const chunk = events.find((e) => e.type === 'chunk')!;
    assert.equal(chunk.done, false);
    assert.equal(chunk.status_code, 206);
    assert.equal(chunk.context_id, 'ctx-1');
    assert.equal(typeof chunk.step_time, 'number');
    assert.ok(chunk.data.length > 0);
    const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
    // The transcript's own words, punctuation attached (docs/api.md).
    assert.deepEqual(words, ['Alpha', 'beta', 'gamma.']);
    const last = events.at(-1)!;
    assert.deepEqual(last, { type: 'done', done: true, status_code: 200, context_id: 'ctx-1', model: 'gepard-1.0' });
    assert.equal(events.filter((e) => e.type === 'done').length, 1);
  });

  test('a failure after the stream opened is an error event, the body ends without done, and it is still charged', async () => {
    const victim = await newOrg(server, { credits: 100_000 });
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    const transcript = 'This stream will break in the middle of its long text. '.repeat(30);
    const response = await server.post('/tts/sse', ttsBody({ model_id: 'omnivoice', transcript, output_format: RAW }), victim.auth);
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read(); // the first chunk is out: the stream is charged
    assert.ok(pool.crashBusyWorker());
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    const events = rest.split('\n\n').filter((b) => b.trim()).map((b) => JSON.parse(b.slice(6)));
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last.done, true);
    assert.equal(last.error_code, 'engine_error');
    assert.equal(last.status_code, 502);
    assert.equal(last.title, 'Engine error');
    assert.equal(last.request_id, response.headers.get('x-request-id'));
    assert.ok(!events.some((e) => e.type === 'done'));
    const { balance, sum } = await balanceOf(server, victim.orgId);
    assert.equal(balance, 100_000 - [...transcript].length);
    assert.equal(sum, balance);
    for (let i = 0; i < 100 && !pool.isReady(); i++) await sleep(20);
  });

  test('a client that disconnects mid-stream stops the engine and frees its slot', async () => {
    const limited = await newOrg(server, { maxConcurrent: 1 });
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    const controller = new AbortController();
    const response = await fetch(server.url + '/tts/sse', {
      method: 'POST',
      headers: limited.auth,
      body: JSON.stringify(ttsBody({ model_id: 'omnivoice', transcript: 'A long story that nobody will hear to the end. '.repeat(60), output_format: RAW })),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const limits = server.app.services.accounts!.limits;
    for (let i = 0; i < 200 && ((await limits.active(limited.orgId)) > 0 || (pool.info().busy as number) > 0); i++) await sleep(10);
    assert.equal(await limits.active(limited.orgId), 0, 'slot released');
    assert.equal(pool.info().busy, 0, 'engine stopped');
  });

  test('405 for other methods', async () => {
    const response = await fetch(server.url + '/tts/sse');
    assert.equal(response.status, 405);
    await response.arrayBuffer();
  });
});
