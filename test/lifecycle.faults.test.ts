/**
 * @module test/lifecycle.faults
 * The request lifecycle under failure: a store whose reads, reservations or
 * ledger writes are slow or throw, limit counters that throw, engines that
 * fail before or after their first audio or answer with no audio, and
 * clients that leave at each step — on every transport. After each case the
 * server is back at rest: no concurrency slot held, no reservation open, no
 * engine worker busy, and the balance equal to the sum of the ledger.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import type { EspeakPool } from '../src/engines/espeak/pool.js';
import type { LedgerEntry } from '../src/store/store.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startFakeUpstream, type FakeUpstream } from './helpers/fake-upstream.js';
import { faultyLimits, faultyStore } from './helpers/faults.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { until } from './helpers/poll.js';

const store = faultyStore();
const limits = faultyLimits();
let upstream: FakeUpstream;
let server: TestServer;

before(async () => {
  upstream = await startFakeUpstream();
  const remote = { upstreams: [{ url: upstream.url, maxConcurrent: 8 }], model: 'remote', sampleRate: 24000, voices: { sarah: 'sarah' }, timeoutMs: 5000, ejectAfterFailures: 1000 };
  server = await startServer({
    store: store.store,
    limits: limits.limits,
    config: {
      accounts: { enabled: true, adminToken: 'lifecycle-admin-token' },
      engines: {
        gpu: { type: 'openai-upstream', format: 'pcm', ...remote },
        'gpu-wav': { type: 'openai-upstream', format: 'wav', ...remote },
        peer: { type: 'cartesia-upstream', format: 'pcm_f32le', ...remote },
      },
      models: {
        remote: { extends: 'gepard-1.0', engine: 'gpu' },
        'remote-wav': { extends: 'gepard-1.0', engine: 'gpu-wav' },
        'peer-model': { extends: 'gepard-1.0', engine: 'peer' },
      },
    },
  });
});
after(async () => {
  await server.close();
  await upstream.close();
});
afterEach(() => {
  store.faults.clear();
  limits.faults.clear();
  upstream.script = [];
});

const LONG = 'A longer text that takes a moment to generate, sentence after sentence. '.repeat(12);
const pool = () => server.app.services.engines.get('espeak') as unknown as EspeakPool;

async function charges(orgId: string): Promise<LedgerEntry[]> {
  return (await server.app.services.accounts!.store.ledger.list(orgId, { limit: 1000 })).data.filter((e) => e.kind === 'charge');
}

/** Polls (bounded) until the organisation is at rest, then checks the books. */
async function atRest(org: TestOrg): Promise<void> {
  const { store: real } = server.app.services.accounts!;
  const state = async () => ({
    slots: await limits.real.active(org.orgId),
    reserved: await real.ledger.reserved(org.orgId),
    busy: pool().info().busy as number,
  });
  let now = await state();
  await until(async () => ((now = await state()), !now.slots && !now.reserved && !now.busy), { timeoutMs: 3_000, intervalMs: 10 }).catch(() => {});
  assert.deepEqual(now, { slots: 0, reserved: 0, busy: 0 }, 'no slot, reservation or worker left held');
  const orgRow = await real.orgs.get(org.orgId);
  assert.equal(orgRow!.balance, await real.ledger.sum(org.orgId), 'balance = Σ ledger');
}

async function sseEvents(response: Response): Promise<Record<string, any>[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)));
}

/** A /tts/bytes request over node:http that the test abandons once `leaveWhen` says so. */
function leavingRequest(path: string, body: unknown, auth: Record<string, string>, leave: 'at-once' | 'first-byte'): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(server.url + path);
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json', ...auth } }, (res) => {
      res.once('data', () => {
        if (leave === 'first-byte') req.destroy();
      });
      res.on('error', () => {});
      res.on('close', () => resolve());
    });
    req.on('error', () => resolve());
    req.end(JSON.stringify(body), () => {
      if (leave === 'at-once') setImmediate(() => req.destroy());
    });
  });
}

describe('store faults', { timeout: 60_000 }, () => {
  test('a ledger write that fails on a stream ends it with an error event, charges nothing and frees the worker', async () => {
    const org = await newOrg(server, { credits: 10_000, maxConcurrent: 2 });
    store.faults.set('ledger.settle', { fail: Infinity });
    const response = await server.post('/tts/sse', ttsBody({ transcript: LONG, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }), org.auth);
    assert.equal(response.status, 200);
    const events = await sseEvents(response);
    assert.equal(events[0].type, 'chunk');
    assert.equal(events.at(-1)!.type, 'error');
    assert.equal(events.at(-1)!.error_code, 'store_unavailable');
    assert.ok(events.length < 6, `generation stopped after the failed charge (${events.length} events)`);
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
    // With its one worker free again, the next request is served.
    store.faults.clear();
    const next = await server.post('/tts/bytes', ttsBody({ transcript: 'Next.' }), org.auth);
    assert.equal(next.status, 200);
    await next.arrayBuffer();
    await atRest(org);
  });

  test('a progressive /tts/bytes whose charge fails is cut off, not finished for free', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    store.faults.set('ledger.settle', { fail: Infinity });
    const response = await server.post('/tts/bytes', ttsBody({ transcript: LONG, stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }), org.auth);
    assert.equal(response.status, 200);
    await assert.rejects(response.arrayBuffer());
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('a stored hit is streamed and charged as its miss was; when its charge fails it ends after the first audio with an error event', async () => {
    const org = await newOrg(server, { credits: 100_000 });
    const body = ttsBody({ transcript: LONG, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } });
    const miss = await server.post('/tts/sse', body, org.auth);
    assert.equal(miss.headers.get('x-cache'), 'miss');
    const missEvents = await sseEvents(miss);
    const chunks = missEvents.filter((e) => e.type === 'chunk').length;
    assert.ok(chunks > 2, `the entry has several pieces (${chunks})`);
    const [missCharge] = await charges(org.orgId);

    const hit = await server.post('/tts/sse', body, org.auth);
    assert.equal(hit.headers.get('x-cache'), 'hit');
    assert.equal(hit.headers.get('x-request-credits'), miss.headers.get('x-request-credits'), 'the quote of a billed hit is the miss’s');
    assert.deepEqual((await sseEvents(hit)).map((e) => e.type), missEvents.map((e) => e.type));
    const rows = await charges(org.orgId);
    assert.equal(rows.length, 2);
    assert.equal(rows[0].characters, missCharge.characters, 'charged as the miss was');

    store.faults.set('ledger.settle', { fail: Infinity });
    const failing = await server.post('/tts/sse', body, org.auth);
    assert.equal(failing.status, 200);
    assert.equal(failing.headers.get('x-cache'), 'hit');
    const events = await sseEvents(failing);
    assert.deepEqual(events.map((e) => e.type), ['chunk', 'error'], 'the first audio, then the error: nothing more of the entry');
    assert.equal(events[1].error_code, 'store_unavailable');
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 2);
  });

  test('a ledger write whose answer is lost after it committed is retried under the same key and charged once', async () => {
    const org = await newOrg(server, { credits: 1000 });
    store.faults.set('ledger.settle', { fail: 1, failAfterCall: true });
    const attempts = store.faults.count('ledger.settle');
    const response = await server.post('/tts/bytes', ttsBody({ transcript: 'Charged exactly once.' }), org.auth);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    assert.equal(store.faults.count('ledger.settle') - attempts, 2, 'retried');
    const rows = await charges(org.orgId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].chargeKey, `${response.headers.get('x-request-id')}/0`);
    assert.equal(response.headers.get('x-credits-remaining'), String(1000 - 21));
    await atRest(org);
  });

  test('slow ledger writes (200 ms) still answer and charge once on every HTTP endpoint', async () => {
    const org = await newOrg(server, { credits: 10_000, maxConcurrent: 4 });
    store.faults.set('ledger.settle', { delayMs: 200 });
    const bodies: [string, unknown][] = [
      ['/tts/bytes', ttsBody({ transcript: 'Slow but sure.' })],
      ['/tts/bytes', ttsBody({ transcript: 'Slow but sure.', stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } })],
      ['/tts/sse', ttsBody({ transcript: 'Slow but sure.', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } })],
      ['/v1/audio/speech', { model: 'gepard-1.0', input: 'Slow but sure.', voice: 'sarah', response_format: 'pcm', stream_format: 'sse' }],
    ];
    for (const [path, body] of bodies) {
      const response = await server.post(path, body, org.auth);
      assert.equal(response.status, 200, path);
      const text = await response.text();
      assert.ok(!text.includes('"error"'), `${path} ended without an error`);
    }
    assert.equal((await charges(org.orgId)).length, 4);
    await atRest(org);
  });

  test('a reservation that cannot be made is 503 store_unavailable with Retry-After, and frees the slot', async () => {
    const org = await newOrg(server, { credits: 1000, maxConcurrent: 1 });
    store.faults.set('ledger.reserve', { fail: Infinity });
    const response = await server.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '1');
    assert.equal(((await response.json()) as { error_code: string }).error_code, 'store_unavailable');
    await atRest(org);
    store.faults.clear();
    const next = await server.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(next.status, 200, 'the one slot was released');
    await next.arrayBuffer();
  });

  test('a store that cannot read the key is 503, never 500', async () => {
    const org = await newOrg(server, { credits: 1000 });
    store.faults.set('keys.get', { fail: Infinity });
    // A fresh key id is not cached, so the read is made.
    const other = await newOrg(server, { credits: 1000 });
    const response = await server.post('/tts/bytes', ttsBody(), other.auth);
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { error_code: string }).error_code, 'store_unavailable');
    await atRest(org);
  });
});

describe('limit counter faults', { timeout: 30_000 }, () => {
  test('counters that throw are 503 limits_unavailable; nothing is reserved or charged', async () => {
    const org = await newOrg(server, { credits: 1000, maxConcurrent: 2, rateLimit: { requests: 100, per_seconds: 60 } });
    for (const hook of ['acquire', 'consume'] as const) {
      limits.faults.set(hook, { fail: Infinity });
      const response = await server.post('/tts/bytes', ttsBody(), org.auth);
      assert.equal(response.status, 503, hook);
      assert.equal(response.headers.get('retry-after'), '1');
      assert.equal(((await response.json()) as { error_code: string }).error_code, 'limits_unavailable');
      limits.faults.clear();
      await atRest(org);
    }
    assert.equal((await charges(org.orgId)).length, 0);
  });
});

describe('clients that leave', { timeout: 60_000 }, () => {
  test('during a slow admission (150 ms): the slot and the reservation are released, nothing is generated or charged', async () => {
    const org = await newOrg(server, { credits: 1000, maxConcurrent: 1 });
    store.faults.set('ledger.reserve', { delayMs: 150 });
    const before = upstream.requests.length;
    const reserves = store.faults.done('ledger.reserve');
    await leavingRequest('/tts/bytes', ttsBody({ model_id: 'remote' }), org.auth, 'at-once');
    // The admission finishes after the client left; the server must notice.
    await until(() => store.faults.done('ledger.reserve') > reserves, { intervalMs: 5 });
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
    assert.equal(upstream.requests.length, before, 'no engine work for nobody');
    store.faults.clear();
    const next = await server.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(next.status, 200, 'the only slot is free');
    await next.arrayBuffer();
  });

  test('during generation of a clip: not charged, the engine stops', async () => {
    const org = await newOrg(server, { credits: 10_000, maxConcurrent: 1 });
    const body = ttsBody({ transcript: LONG, model_id: 'omnivoice' });
    await new Promise<void>((resolve) => {
      const url = new URL(server.url);
      const req = httpRequest({ host: url.hostname, port: url.port, path: '/tts/bytes', method: 'POST', headers: { 'content-type': 'application/json', ...org.auth } });
      req.on('error', () => resolve());
      req.end(JSON.stringify(body));
      // Leave once the engine is busy with it.
      const poll = setInterval(() => {
        if ((pool().info().busy as number) > 0) {
          clearInterval(poll);
          req.destroy();
          resolve();
        }
      }, 2);
    });
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('after the first audio of a stream: charged once, the engine stops', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    for (const path of ['/tts/sse', '/tts/bytes']) {
      const body = ttsBody({ transcript: LONG, model_id: 'omnivoice', stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } });
      await leavingRequest(path, body, org.auth, 'first-byte');
      await atRest(org);
    }
    const rows = await charges(org.orgId);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.characters === [...LONG].length));
  });
});

describe('engine faults', { timeout: 60_000 }, () => {
  test('an engine failing before its first audio: the documented error, nothing charged, on every HTTP endpoint', async () => {
    const org = await newOrg(server, { credits: 1000 });
    for (const [path, body] of [
      ['/tts/bytes', ttsBody({ model_id: 'remote' })],
      ['/tts/bytes', ttsBody({ model_id: 'remote', stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } })],
      ['/tts/sse', ttsBody({ model_id: 'remote', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } })],
      ['/v1/audio/speech', { model: 'remote', input: 'Hello there.', voice: 'sarah', response_format: 'pcm', stream_format: 'sse' }],
    ] as const) {
      upstream.script = ['status-500', 'status-500'];
      const response = await server.post(path, body, org.auth);
      assert.equal(response.status, 502, path);
      assert.ok(response.headers.get('x-request-id'));
      await response.arrayBuffer();
    }
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('an engine failing after its first audio: a clip is not charged; a stream is charged and ends with an error event', async () => {
    const org = await newOrg(server, { credits: 1000 });
    upstream.script = ['reset-mid-body'];
    const clip = await server.post('/tts/bytes', ttsBody({ model_id: 'remote', transcript: LONG.slice(0, 400) }), org.auth);
    assert.equal(clip.status, 502);
    await clip.arrayBuffer();
    assert.equal((await charges(org.orgId)).length, 0);
    upstream.script = ['reset-mid-body'];
    const stream = await server.post('/tts/sse', ttsBody({ model_id: 'peer-model', transcript: LONG.slice(0, 400), output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } }), org.auth);
    const events = await sseEvents(stream);
    assert.equal(events[0].type, 'chunk');
    assert.equal(events.at(-1)!.type, 'error');
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 1);
  });

  test('an upstream answering 200 with no audio is upstream_error and is not billed, on every endpoint', async () => {
    const org = await newOrg(server, { credits: 1000 });
    const cases: [string, unknown][] = [
      ['/tts/sse', ttsBody({ model_id: 'peer-model', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } })],
      ['/tts/bytes', ttsBody({ model_id: 'remote-wav' })],
      ['/tts/bytes', ttsBody({ model_id: 'remote', stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } })],
      ['/v1/audio/speech', { model: 'remote-wav', input: 'Hello there.', voice: 'sarah', response_format: 'pcm', stream_format: 'sse' }],
      ['/v1/audio/speech', { model: 'remote', input: 'Hello there.', voice: 'sarah', response_format: 'wav' }],
    ];
    for (const [path, body] of cases) {
      upstream.script = ['empty'];
      const response = await server.post(path, body, org.auth);
      assert.equal(response.status, 502, path);
      const text = await response.text();
      assert.match(text, /upstream_error/, path);
    }
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('a crashed engine worker mid-stream: the stream ends with engine_error, the worker is replaced', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    const response = await server.post('/tts/sse', ttsBody({ transcript: LONG, model_id: 'omnivoice', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }), org.auth);
    const reader = response.body!.getReader();
    await reader.read();
    assert.ok(pool().crashBusyWorker(), 'a worker was busy');
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    assert.match(text, /"error_code":"engine_error"/);
    await atRest(org);
    await until(() => pool().isReady(), { timeoutMs: 3_000, intervalMs: 10, what: 'the pool ready again' });
    const next = await server.post('/tts/bytes', ttsBody({ transcript: 'Back again.' }), org.auth);
    assert.equal(next.status, 200);
    await next.arrayBuffer();
  });
});

describe('WebSocket turns', { timeout: 60_000 }, () => {
  const WS = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } };

  test('a context whose socket closed while it was being admitted is released and not billed', async () => {
    const org = await newOrg(server, { credits: 10_000, maxConcurrent: 1 });
    store.faults.set('ledger.reserve', { delayMs: 150 });
    const reserves = store.faults.done('ledger.reserve');
    const socket = await TestSocket.open(server.url, org.auth);
    socket.send({ ...WS, context_id: 'late', transcript: 'Nobody will hear this.' });
    await until(() => store.faults.count('ledger.reserve') > reserves, { intervalMs: 5 });
    socket.ws.terminate();
    await until(() => store.faults.done('ledger.reserve') > reserves, { intervalMs: 5 });
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('a turn whose socket is closing delivers nothing and is not billed', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    const socket = await TestSocket.open(server.url, org.auth);
    const turns = store.faults.done('ledger.reserve');
    socket.send({ ...WS, context_id: 'closing', transcript: LONG.slice(0, 300) });
    socket.close();
    // The client stops reading: the server has the close frame but the connection stays half-open,
    // so the turn runs on a socket that is CLOSING and can deliver nothing.
    (socket.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await until(() => store.faults.done('ledger.reserve') > turns, { intervalMs: 5 });
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0, 'no audio reached the client');
    socket.ws.terminate();
  });

  test('closing the socket mid-turn stops generation and bills only what was delivered', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    const socket = await TestSocket.open(server.url, org.auth);
    socket.send({ ...WS, context_id: 'cut', transcript: LONG });
    await socket.waitFor((e) => e.type === 'chunk');
    socket.ws.terminate();
    await atRest(org);
    const rows = await charges(org.orgId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].characters, [...LONG].length, 'the turn\'s text, as received');
  });

  test('a batch charge that cannot be written ends the turn with store_unavailable', async () => {
    const org = await newOrg(server, { credits: 100_000 });
    const socket = await TestSocket.open(server.url, org.auth);
    store.faults.set('ledger.settle', { fail: Infinity });
    const text = 'Word after word, the turn goes on and on. '.repeat(30); // > 1,000 characters
    socket.send({ ...WS, context_id: 'broke', transcript: text, continue: true });
    const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'broke');
    assert.equal(error.error_code, 'store_unavailable');
    assert.equal(error.done, true);
    const chunksAtError = socket.of('broke', 'chunk').length;
    socket.send({ ...WS, context_id: 'broke', transcript: 'More text.', continue: false });
    await socket.waitFor((e) => e.type === 'error' || e.type === 'done', 2000).catch(() => {});
    assert.equal(socket.of('broke', 'chunk').length, chunksAtError, 'no audio after the failure');
    store.faults.clear();
    socket.close();
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('a turn whose last charge cannot be written ends with store_unavailable, never done', async () => {
    const org = await newOrg(server, { credits: 100_000 });
    const socket = await TestSocket.open(server.url, org.auth);
    // The turn's one batch is charged as it ends: every write of it fails (not an outage: a broken write).
    store.faults.set('ledger.settle', { fail: Infinity });
    socket.send({ ...WS, context_id: 'last', transcript: 'A short turn, charged as it ends.' });
    const end = await socket.waitFor((e) => (e.type === 'error' || e.type === 'done') && e.context_id === 'last');
    assert.equal(end.type, 'error', 'done is sent only once the last charge is written');
    assert.equal(end.error_code, 'store_unavailable');
    store.faults.clear();
    socket.close();
    await atRest(org);
    assert.equal((await charges(org.orgId)).length, 0);
  });

  test('a key revoked while its socket is open cannot open new contexts', async () => {
    const org = await newOrg(server, { credits: 10_000 });
    const socket = await TestSocket.open(server.url, org.auth);
    socket.send({ ...WS, context_id: 'before', transcript: 'Still valid.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'before');
    await server.app.services.accounts!.admin.revokeKey(org.keyId);
    socket.send({ ...WS, context_id: 'after', transcript: 'No longer.' });
    const error = await socket.waitFor((e) => e.context_id === 'after');
    assert.equal(error.type, 'error');
    assert.equal(error.error_code, 'invalid_api_key');
    socket.close();
    await atRest(org);
  });
});

describe('charges while the store is away', { timeout: 60_000 }, () => {
  const WS = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } };
  const journal = () => server.app.services.accounts!.journal;

  test('a clip, a stream and a WebSocket turn whose charges meet an outage are served, journaled, and written once when the store is back', async () => {
    const org = await newOrg(server, { credits: 100_000 });
    const before = journal().entries;
    store.faults.set('ledger.settle', { fail: Infinity, unavailable: true });
    const clipText = 'A clip charged from the journal.';
    const clip = await server.post('/tts/bytes', ttsBody({ transcript: clipText }), org.auth);
    assert.equal(clip.status, 200);
    assert.ok((await clip.arrayBuffer()).byteLength > 0);
    assert.equal(clip.headers.get('x-request-credits'), String([...clipText].length));
    const streamText = 'A stream charged at its first audio, from the journal.';
    const stream = await server.post('/tts/sse', ttsBody({ transcript: streamText, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }), org.auth);
    const events = await sseEvents(stream);
    assert.equal(events.at(-1)!.type, 'done', 'the stream ends as it would with the store up');
    const socket = await TestSocket.open(server.url, org.auth);
    const turnText = 'A turn whose last batch is journaled before done.';
    socket.send({ ...WS, context_id: 'journaled', transcript: turnText });
    const end = await socket.waitFor((e) => (e.type === 'error' || e.type === 'done') && e.context_id === 'journaled');
    assert.equal(end.type, 'done');
    socket.close();
    assert.equal(journal().entries - before, 3, 'each charge is on the gateway\'s disk');
    assert.equal((await charges(org.orgId)).length, 0, 'nothing reached the store yet');
    const metrics = server.app.services.metrics!.registry;
    assert.match(await metrics.metrics(), new RegExp(`^voicegate_charge_journal_entries ${before + 3}$`, 'm'));
    const replayed = server.app.services.accounts!.journal.replayed;

    store.faults.clear();
    await until(() => journal().entries === before, { timeoutMs: 10_000, what: 'the journal drained within 10 s of the store answering' });
    const rows = await charges(org.orgId);
    assert.deepEqual(rows.map((r) => r.characters).sort((a, b) => a! - b!), [clipText, turnText, streamText].map((t) => [...t].length).sort((a, b) => a - b));
    assert.equal(new Set(rows.map((r) => r.chargeKey)).size, 3, 'no charge key twice');
    assert.ok(rows.some((r) => r.chargeKey === `${clip.headers.get('x-request-id')}/0`), 'under the request\'s own charge key');
    assert.match(await metrics.metrics(), new RegExp(`^voicegate_charge_journal_replayed_total ${replayed + 3}$`, 'm'));
    await atRest(org);
  });

  test('while the store is away, a key used here is admitted from its last-known-good copy; a key never seen is 503 at once; readyz says store degraded', async () => {
    const known = await newOrg(server, { credits: 100_000 });
    const unseen = await newOrg(server, { credits: 100_000 });
    const outage = server.app.services.accounts!.outage;
    const speak = () => server.post('/tts/bytes', ttsBody({ transcript: 'Known key, held credit.' }), known.auth);
    const first = await speak();
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    const reads = store.faults.count('keys.get');
    store.faults.set('keys.get', { fail: Infinity, unavailable: true });
    store.faults.set('orgs.get', { fail: Infinity, unavailable: true });
    store.faults.set('ledger.settle', { fail: Infinity, unavailable: true });
    // Served throughout, past the cache's 500 ms, while the key's reads fail.
    const began = performance.now();
    let served = 0;
    await until(
      async () => {
        const response = await speak();
        assert.equal(response.status, 200, `served from the last-known-good copy (${response.status})`);
        await response.arrayBuffer();
        served++;
        return store.faults.count('keys.get') > reads && performance.now() - began > 1_000;
      },
      { timeoutMs: 10_000, what: 'requests served while the key could not be read' },
    );
    assert.equal(outage.state, 'degraded');
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { status: string; store?: string };
    assert.equal(ready.status, 'ready');
    assert.equal(ready.store, 'degraded');

    const t0 = performance.now();
    const refused = await server.post('/tts/bytes', ttsBody({ transcript: 'Never seen here.' }), unseen.auth);
    assert.equal(refused.status, 503);
    assert.equal(((await refused.json()) as { error_code: string }).error_code, 'store_unavailable');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.ok(performance.now() - t0 < 1_000, 'refused within a second');

    store.faults.clear();
    await until(() => server.app.services.accounts!.journal.entries === 0, { timeoutMs: 10_000, what: 'the journal drained' });
    const rows = await charges(known.orgId);
    assert.equal(rows.length, served + 1, 'every request served is charged, once');
    assert.equal(new Set(rows.map((r) => r.chargeKey)).size, rows.length);
    const again = await speak();
    assert.equal(again.status, 200);
    await again.arrayBuffer();
    await until(() => outage.state === 'available', { what: 'the store answers again' });
    await atRest(known);
  });

  test('a charge that committed but whose answers were lost in the outage is journaled and still lands once', async () => {
    const org = await newOrg(server, { credits: 1000 });
    store.faults.set('ledger.settle', { fail: 3, failAfterCall: true, unavailable: true });
    const response = await server.post('/tts/bytes', ttsBody({ transcript: 'Charged exactly once.' }), org.auth);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    assert.equal((await charges(org.orgId)).length, 1, 'the first attempt committed');
    await until(() => journal().entries === 0, { timeoutMs: 10_000, what: 'the journal drained' });
    const rows = await charges(org.orgId);
    assert.equal(rows.length, 1, 'the replay found it there');
    assert.equal(rows[0].chargeKey, `${response.headers.get('x-request-id')}/0`);
    await atRest(org);
  });
});

describe('reservations', { timeout: 30_000 }, () => {
  test('30 concurrent 20-character requests on a 10-credit balance overshoot by at most one request', async () => {
    const org = await newOrg(server, { credits: 10 });
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => server.post('/tts/bytes', ttsBody({ transcript: 'Twenty characters!!!' }), org.auth).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    const balance = (await server.app.services.accounts!.store.orgs.get(org.orgId))!.balance;
    assert.ok(balance >= -20, `balance ${balance}`);
    assert.equal(responses.filter((s) => s === 200).length, (10 - balance) / 20);
    assert.ok(responses.every((s) => s === 200 || s === 402), String(responses));
    await atRest(org);
  });

  test('a client x-request-id is recorded beside the server\'s own id, which keys the charge', async () => {
    const org = await newOrg(server, { credits: 100 });
    const response = await server.post('/tts/bytes', ttsBody({ transcript: 'Trace me.' }), { ...org.auth, 'x-request-id': 'client-trace-1' });
    await response.arrayBuffer();
    const id = response.headers.get('x-request-id')!;
    assert.match(id, /^req_[0-9a-f]{24}$/);
    const [row] = await charges(org.orgId);
    assert.equal(row.requestId, id);
    assert.equal(row.clientRequestId, 'client-trace-1');
    assert.equal(row.chargeKey, `${id}/0`);
  });
});
