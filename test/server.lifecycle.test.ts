/**
 * @module test/server.lifecycle
 * The server as an operator sees it: health and readiness, the model list
 * naming each model's engine, request ids on every log line, a crashed
 * engine worker answered with 502 while the server stays up, and a graceful
 * shutdown that finishes the request in flight.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { startServer, ttsBody } from './helpers/server.js';

test('healthz, readyz, / and the model list', async () => {
  const server = await startServer({ config: { models: { 'tone-load': { extends: 'gepard-1.0', engine: 'tone' } } } });
  try {
    assert.deepEqual(await (await fetch(server.url + '/healthz')).json(), { status: 'ok' });
    const ready = await fetch(server.url + '/readyz');
    assert.equal(ready.status, 200);
    const readyBody = (await ready.json()) as { engines: { id: string; ready: boolean }[] };
    assert.deepEqual(readyBody.engines.map((e) => [e.id, e.ready]).sort(), [['espeak', true], ['tone', true]]);
    const root = (await (await fetch(server.url + '/')).json()) as { ok: boolean; version: string };
    assert.equal(root.ok, true);
    assert.match(root.version, /^\d+\.\d+\.\d+/);

    const models = (await (await fetch(server.url + '/models')).json()) as { data: Record<string, any>[] };
    const byId = Object.fromEntries(models.data.map((m) => [m.id, m]));
    assert.deepEqual(Object.keys(byId).sort(), ['gepard-1.0', 'omnivoice', 'tone-load', 'voicegate-1.0']);
    assert.deepEqual(byId['gepard-1.0'].engine, { id: 'espeak', type: 'espeak', native_sample_rate: 22050, ready: true, error: null, upstreams: null });
    assert.equal(byId['tone-load'].engine.type, 'tone');
    assert.equal(byId['gepard-1.0'].max_transcript_chars, 2000);
    assert.deepEqual(byId.omnivoice.formats.bytes.containers, ['wav', 'mp3', 'raw']);
    assert.deepEqual(byId.omnivoice.formats.stream.containers, ['wav', 'raw']);
    assert.equal(byId.omnivoice.default_voice, 'sarah');
    assert.equal((await fetch(server.url + '/models/omnivoice')).status, 200);
    assert.equal((await fetch(server.url + '/models/nope')).status, 404);

    const ids: string[] = [];
    for (let after = ''; ; ) {
      const page = (await (await fetch(`${server.url}/voices?limit=100${after}`)).json()) as { data: { id: string }[] };
      if (page.data.length === 0) break;
      ids.push(...page.data.map((v) => v.id));
      after = `&starting_after=${page.data.at(-1)!.id}`;
    }
    for (const id of ['sarah', 'michael', 'emma', 'oliver', 'isla', 'jordan', 'espeak-fr-fr', 'espeak-de', 'espeak-en-us']) assert.ok(ids.includes(id), id);
    const french = await server.post('/tts/bytes', ttsBody({ transcript: 'Bonjour tout le monde.', voice: { mode: 'id', id: 'espeak-fr-fr' } }));
    assert.equal(french.status, 200);
    await french.arrayBuffer();
  } finally {
    await server.close();
  }
});

test('every log line of a request carries its request id', async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const server = await startServer({ logDestination: destination });
  try {
    const response = await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: 'ghost' } }));
    const id = response.headers.get('x-request-id');
    await response.arrayBuffer();
    const mine = lines.filter((l) => l.request_id === id);
    assert.ok(mine.length >= 2, 'incoming, rejected and completed lines');
    assert.ok(mine.some((l) => l.code === 'voice_not_found'));
  } finally {
    await server.close();
  }
});

test('a crashed engine worker gives 502 engine_error and the server keeps serving', async () => {
  const server = await startServer();
  try {
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    const pending = server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: 'A long text to keep the worker busy. '.repeat(120) }));
    for (let i = 0; i < 200 && !pool.crashBusyWorker(); i++) await new Promise((r) => setTimeout(r, 5));
    const response = await pending;
    const body = (await response.json()) as { error_code: string };
    assert.equal(response.status, 502);
    assert.equal(body.error_code, 'engine_error');
    for (let i = 0; i < 100 && !pool.isReady(); i++) await new Promise((r) => setTimeout(r, 20));
    const after = await server.post('/tts/bytes', ttsBody());
    assert.equal(after.status, 200);
    await after.arrayBuffer();
  } finally {
    await server.close();
  }
});

test('shutdown finishes the request in flight, then refuses new connections', async () => {
  const server = await startServer();
  const pending = server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: 'Finish this sentence before you go. '.repeat(60) }));
  await new Promise((r) => setTimeout(r, 30));
  const closed = server.close();
  const response = await pending;
  assert.equal(response.status, 200);
  const audio = Buffer.from(await response.arrayBuffer());
  assert.ok(audio.length > 44 + 22050 * 2 * 10, 'the whole clip arrived');
  await closed;
  await assert.rejects(fetch(server.url + '/healthz'));
});
