/**
 * @module test/helpers/mixed-load
 * Concurrent mixed requests over all four transports (/tts/bytes whole and
 * progressive, /tts/sse, /v1/audio/speech whole and SSE, WebSocket turns of
 * up to three batches), some abandoned by their client at a random step,
 * spread over one or more servers; and the audit of the books afterwards:
 * balance = initial − Σ charges, no charge key twice, every row as its
 * endpoint's rule says, every request that finished charged exactly once.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { LedgerEntry, Store } from '../../src/store/store.js';
import { ttsBody } from './server.js';
import { TestSocket } from './ws-client.js';

/** A small deterministic generator, so a failure can be replayed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export type Kind = 'bytes' | 'bytes-stream' | 'sse' | 'openai' | 'openai-sse' | 'websocket';
export type Leave = 'never' | 'at-once' | 'first-byte';
export interface Outcome {
  kind: Kind;
  characters: number;
  leave: Leave;
  /** The server that was asked. */
  url: string;
  requestId: string | null;
  /** The client received the whole answer (a 200 body to its end, or `done`). */
  finished: boolean;
  status: number;
  /** The `error_code` of an error answer or event, when one came. */
  errorCode: string | null;
}
type Result = Omit<Outcome, 'kind' | 'characters' | 'leave' | 'url'>;

export const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };
const SENTENCE = 'The quick brown fox jumps over the lazy dog. ';

export function transcriptOf(characters: number): string {
  return SENTENCE.repeat(Math.ceil(characters / SENTENCE.length)).slice(0, characters);
}

/** The registry code in a Cartesia envelope or event (`error_code`) or an OpenAI one (`error.code`). */
function errorCodeIn(text: string): string | null {
  return /"(?:error_)?code":"([a-z_]+)"/.exec(text)?.[1] ?? null;
}

function http(base: string, auth: Record<string, string>, path: string, body: unknown, leave: Leave, isError: (text: string) => boolean): Promise<Result> {
  return new Promise((resolve) => {
    const url = new URL(base);
    let requestId: string | null = null;
    let status = 0;
    let text = '';
    let ended = false;
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json', ...auth } }, (res) => {
      requestId = String(res.headers['x-request-id']);
      status = res.statusCode ?? 0;
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (leave === 'first-byte') req.destroy();
      });
      res.on('end', () => (ended = true));
      res.on('error', () => {});
      res.on('close', () => resolve({ requestId, status, finished: ended && status === 200 && !isError(text), errorCode: status === 200 && !isError(text) ? null : errorCodeIn(text) }));
    });
    req.on('error', () => resolve({ requestId, status, finished: false, errorCode: null }));
    req.end(JSON.stringify(body), () => {
      if (leave === 'at-once') setImmediate(() => req.destroy());
    });
  });
}

async function turn(base: string, auth: Record<string, string>, model: string, characters: number, leave: Leave, id: string): Promise<Result> {
  let socket: TestSocket;
  try {
    socket = await TestSocket.open(base, auth);
  } catch (err) {
    return { requestId: null, status: (err as { status?: number }).status ?? 0, finished: false, errorCode: errorCodeIn(String((err as { body?: string }).body ?? '')) };
  }
  const text = transcriptOf(characters);
  const parts = [text.slice(0, characters / 3), text.slice(characters / 3, (2 * characters) / 3), text.slice((2 * characters) / 3)];
  const base_ = { model_id: model, voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: id };
  parts.forEach((part, i) => socket.send({ ...base_, transcript: part, continue: i < parts.length - 1 }));
  let finished = false;
  let errorCode: string | null = null;
  try {
    if (leave === 'at-once') socket.ws.terminate();
    else if (leave === 'first-byte') {
      await socket.waitFor((e) => e.type === 'chunk' || e.type === 'error');
      socket.ws.terminate();
    } else {
      const last = await socket.waitFor((e) => e.type === 'done' || e.type === 'error', 20_000);
      finished = last.type === 'done';
      errorCode = last.type === 'error' ? String(last.error_code) : null;
      socket.close();
    }
  } catch {
    socket.ws.terminate();
  }
  return { requestId: null, status: finished ? 200 : 0, finished, errorCode };
}

export interface MixedLoad {
  /** Servers to spread the requests over, in turn. */
  urls: string[];
  auth: Record<string, string>;
  count: number;
  seed: number;
  /** Model of the Cartesia HTTP requests (default `gepard-1.0`, as the OpenAI ones name). */
  model?: string;
  /** Model of the WebSocket turns (default `omnivoice`). */
  turnModel?: string;
  /** Output sample rate of the Cartesia requests and turns. */
  sampleRate?: number;
}

/** Sends `count` requests at once, of random kinds and lengths, a third abandoned at a random step. */
export async function mixedLoad(options: MixedLoad): Promise<Outcome[]> {
  const random = prng(options.seed);
  const model = options.model ?? 'gepard-1.0';
  const raw = { ...RAW, sample_rate: options.sampleRate ?? RAW.sample_rate };
  const kinds: Kind[] = ['bytes', 'bytes-stream', 'sse', 'openai', 'openai-sse', 'websocket'];
  const jobs: Promise<Outcome>[] = [];
  for (let i = 0; i < options.count; i++) {
    const url = options.urls[i % options.urls.length];
    const kind = kinds[Math.floor(random() * kinds.length)];
    const roll = random();
    const leave: Leave = roll < 0.17 ? 'at-once' : roll < 0.34 ? 'first-byte' : 'never';
    const characters = kind === 'websocket' ? 300 + Math.floor(random() * 2400) : 20 + Math.floor(random() * 300);
    const transcript = transcriptOf(characters);
    const sseError = (text: string) => text.includes('"type":"error"');
    const wav = { container: 'wav', encoding: 'pcm_s16le', sample_rate: raw.sample_rate };
    const run = (): Promise<Result> => {
      switch (kind) {
        case 'bytes':
          return http(url, options.auth, '/tts/bytes', ttsBody({ model_id: model, transcript, output_format: wav }), leave, () => false);
        case 'bytes-stream':
          return http(url, options.auth, '/tts/bytes', ttsBody({ model_id: model, transcript, stream: true, output_format: raw }), leave, () => false);
        case 'sse':
          return http(url, options.auth, '/tts/sse', ttsBody({ model_id: model, transcript, output_format: raw }), leave, sseError);
        case 'openai':
          return http(url, options.auth, '/v1/audio/speech', { model: 'gepard-1.0', input: transcript, voice: 'sarah', response_format: 'wav' }, leave, () => false);
        case 'openai-sse':
          return http(url, options.auth, '/v1/audio/speech', { model: 'gepard-1.0', input: transcript, voice: 'sarah', response_format: 'pcm', stream_format: 'sse' }, leave, sseError);
        case 'websocket':
          return turn(url, options.auth, options.turnModel ?? 'omnivoice', characters, leave, `turn-${i}`);
      }
    };
    jobs.push(run().then((result) => ({ kind, characters, leave, url, ...result })));
  }
  return Promise.all(jobs);
}

/** Every ledger row of the organisation, newest first. */
export async function allRows(store: Store, orgId: string): Promise<LedgerEntry[]> {
  const rows: LedgerEntry[] = [];
  for (let page = await store.ledger.list(orgId, { limit: 1000 }); ; page = await store.ledger.list(orgId, { limit: 1000, startingAfter: rows.at(-1)!.id })) {
    rows.push(...page.data);
    if (!page.hasMore) break;
  }
  return rows;
}

/**
 * Checks the books of `orgId` after a mixed load: balance = initial − Σ charges, each charge key
 * once, every HTTP row once per request and every WebSocket turn's batches in order, and every
 * request its client received in full charged exactly once for all its characters.
 */
export async function auditBooks(store: Store, orgId: string, initial: number, outcomes: Outcome[]): Promise<void> {
  const charges = (await allRows(store, orgId)).filter((r) => r.kind === 'charge');
  const balance = (await store.orgs.get(orgId))!.balance;
  assert.equal(balance, initial + charges.reduce((sum, r) => sum + r.credits, 0), 'balance = initial − Σ charges');
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
}
