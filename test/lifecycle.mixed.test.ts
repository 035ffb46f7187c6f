/**
 * @module test/lifecycle.mixed
 * 200 concurrent requests over all four transports (/tts/bytes whole and
 * progressive, /tts/sse, /v1/audio/speech whole and SSE, WebSocket turns of
 * up to three batches), a third of them abandoned by their client at a
 * random step. Afterwards the books must balance exactly: balance = initial
 * − Σ charges, no charge key twice, every row as its endpoint's rule says,
 * every request that finished charged exactly once, nothing left held.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerEntry } from '../src/store/store.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
let org: TestOrg;
const INITIAL = 1_000_000;
before(async () => {
  // A burst of 200 on two workers queues for longer than the default deadline on a loaded machine; the books are what is tested here.
  server = await startServer({ config: { accounts: { enabled: true }, engines: { espeak: { type: 'espeak', workers: 2, queueTimeoutMs: 60_000 } } } });
  org = await newOrg(server, { credits: INITIAL });
});
after(() => server.close());

/** A small deterministic generator, so a failure can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

type Kind = 'bytes' | 'bytes-stream' | 'sse' | 'openai' | 'openai-sse' | 'websocket';
type Leave = 'never' | 'at-once' | 'first-byte';
interface Outcome {
  kind: Kind;
  characters: number;
  leave: Leave;
  requestId: string | null;
  /** The client received the whole answer (a 200 body to its end, or `done`). */
  finished: boolean;
  status: number;
}

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };
const SENTENCE = 'The quick brown fox jumps over the lazy dog. ';

function http(path: string, body: unknown, leave: Leave, isError: (text: string) => boolean): Promise<Omit<Outcome, 'kind' | 'characters' | 'leave'>> {
  return new Promise((resolve) => {
    const url = new URL(server.url);
    let requestId: string | null = null;
    let status = 0;
    let text = '';
    let ended = false;
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json', ...org.auth } }, (res) => {
      requestId = String(res.headers['x-request-id']);
      status = res.statusCode ?? 0;
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (leave === 'first-byte') req.destroy();
      });
      res.on('end', () => (ended = true));
      res.on('error', () => {});
      res.on('close', () => resolve({ requestId, status, finished: ended && status === 200 && !isError(text) }));
    });
    req.on('error', () => resolve({ requestId, status, finished: false }));
    req.end(JSON.stringify(body), () => {
      if (leave === 'at-once') setImmediate(() => req.destroy());
    });
  });
}

async function turn(characters: number, leave: Leave, id: string): Promise<Omit<Outcome, 'kind' | 'characters' | 'leave'>> {
  const socket = await TestSocket.open(server.url, org.auth);
  const text = SENTENCE.repeat(Math.ceil(characters / SENTENCE.length)).slice(0, characters);
  const parts = [text.slice(0, characters / 3), text.slice(characters / 3, (2 * characters) / 3), text.slice((2 * characters) / 3)];
  const base = { model_id: 'omnivoice', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: id };
  parts.forEach((part, i) => socket.send({ ...base, transcript: part, continue: i < parts.length - 1 }));
  let finished = false;
  try {
    if (leave === 'at-once') socket.ws.terminate();
    else if (leave === 'first-byte') {
      await socket.waitFor((e) => e.type === 'chunk' || e.type === 'error');
      socket.ws.terminate();
    } else {
      const last = await socket.waitFor((e) => e.type === 'done' || e.type === 'error', 20_000);
      finished = last.type === 'done';
      socket.close();
    }
  } catch {
    socket.ws.terminate();
  }
  return { requestId: null, status: finished ? 200 : 0, finished };
}

test('200 concurrent mixed requests with random aborts keep the books exact', { timeout: 120_000 }, async () => {
  const random = prng(9);
  const kinds: Kind[] = ['bytes', 'bytes-stream', 'sse', 'openai', 'openai-sse', 'websocket'];
  const jobs: Promise<Outcome>[] = [];
  for (let i = 0; i < 200; i++) {
    const kind = kinds[Math.floor(random() * kinds.length)];
    const roll = random();
    const leave: Leave = roll < 0.17 ? 'at-once' : roll < 0.34 ? 'first-byte' : 'never';
    const characters = kind === 'websocket' ? 300 + Math.floor(random() * 2400) : 20 + Math.floor(random() * 300);
    const transcript = SENTENCE.repeat(Math.ceil(characters / SENTENCE.length)).slice(0, characters);
    const sseError = (text: string) => text.includes('"type":"error"');
    const run = (): Promise<Omit<Outcome, 'kind' | 'characters' | 'leave'>> => {
      switch (kind) {
        case 'bytes':
          return http('/tts/bytes', ttsBody({ transcript }), leave, () => false);
        case 'bytes-stream':
          return http('/tts/bytes', ttsBody({ transcript, stream: true, output_format: RAW }), leave, () => false);
        case 'sse':
          return http('/tts/sse', ttsBody({ transcript, output_format: RAW }), leave, sseError);
        case 'openai':
          return http('/v1/audio/speech', { model: 'gepard-1.0', input: transcript, voice: 'sarah', response_format: 'wav' }, leave, () => false);
        case 'openai-sse':
          return http('/v1/audio/speech', { model: 'gepard-1.0', input: transcript, voice: 'sarah', response_format: 'pcm', stream_format: 'sse' }, leave, sseError);
        case 'websocket':
          return turn(characters, leave, `turn-${i}`);
      }
    };
    jobs.push(run().then((result) => ({ kind, characters, leave, ...result })));
  }
  const outcomes = await Promise.all(jobs);

  const { store, limits } = server.app.services.accounts!;
  const pool = server.app.services.engines.get('espeak')!;
  for (let i = 0; i < 500; i++) {
    const held = (await limits.active(org.orgId)) + (await store.ledger.reserved(org.orgId)) + (pool.info().busy as number);
    if (held === 0) break;
    await sleep(20);
  }
  assert.equal(await store.ledger.reserved(org.orgId), 0, 'no reservation left open');
  assert.equal(pool.info().busy, 0, 'no worker left busy');

  const rows: LedgerEntry[] = [];
  for (let page = await store.ledger.list(org.orgId, { limit: 1000 }); ; page = await store.ledger.list(org.orgId, { limit: 1000, startingAfter: rows.at(-1)!.id })) {
    rows.push(...page.data);
    if (!page.hasMore) break;
  }
  const charges = rows.filter((r) => r.kind === 'charge');
  const balance = (await store.orgs.get(org.orgId))!.balance;
  assert.equal(balance, INITIAL + charges.reduce((sum, r) => sum + r.credits, 0), 'balance = initial − Σ charges');
  assert.equal(new Set(charges.map((r) => r.chargeKey)).size, charges.length, 'no charge key twice');

  const byRequest = new Map<string, LedgerEntry[]>();
  for (const row of charges) {
    assert.equal(row.chargeKey, `${row.requestId}/${row.chargeKey!.split('/')[1]}`);
    byRequest.set(row.requestId!, [...(byRequest.get(row.requestId!) ?? []), row]);
  }
  for (const [requestId, list] of byRequest) {
    const endpoint = list[0].endpoint;
    if (endpoint === 'tts.websocket') {
      // Batches 0, 1, … in order: 1,000 characters each but the last.
      const sorted = list.sort((a, b) => Number(a.chargeKey!.split('/')[1]) - Number(b.chargeKey!.split('/')[1]));
      sorted.forEach((row, i) => {
        assert.equal(row.chargeKey, `${requestId}/${i}`);
        if (i < sorted.length - 1) assert.equal(row.characters, 1000);
        else assert.ok(row.characters! > 0 && row.characters! <= 1000);
      });
    } else {
      assert.equal(list.length, 1, `${endpoint} charged once`);
      assert.equal(list[0].chargeKey, `${requestId}/0`);
    }
  }

  // Every HTTP request its client received in full was charged exactly once, for its whole transcript.
  for (const outcome of outcomes.filter((o) => o.kind !== 'websocket' && o.finished)) {
    const list = byRequest.get(outcome.requestId!) ?? [];
    assert.equal(list.length, 1, `${outcome.kind} ${outcome.requestId} charged`);
    assert.equal(list[0].characters, outcome.characters);
  }
  // Finished WebSocket turns were charged for all their characters.
  const wsTotals = [...byRequest.values()].filter((l) => l[0].endpoint === 'tts.websocket').map((l) => l.reduce((n, r) => n + r.characters!, 0));
  for (const outcome of outcomes.filter((o) => o.kind === 'websocket' && o.finished)) {
    const index = wsTotals.indexOf(outcome.characters);
    assert.ok(index >= 0, `a finished turn of ${outcome.characters} characters was charged in full`);
    wsTotals.splice(index, 1);
  }
  const finished = outcomes.filter((o) => o.finished).length;
  const unfinished = outcomes.filter((o) => !o.finished && o.leave === 'never').map((o) => `${o.kind}:${o.status}`);
  assert.ok(finished >= 100, `${finished} of 200 finished; not finished without leaving: ${unfinished.join(' ')}`);
});
