/**
 * @module test/agent-frameworks
 * Voice-agent frameworks, as raw `ws` and HTTP traffic: exactly what
 * `shared/reference/clients.md` says Pipecat and LiveKit Agents send —
 * Pipecat's sentence mode (`max_buffer_delay_ms: 0`) and token mode (unset:
 * managed buffering), its `cancel`; LiveKit's `" "` end of input, `language:
 * null`, close-on-interrupt, its zod schemas for server messages (an error
 * event must carry an `error` string), a bad voice that must end the turn —
 * and the error shapes of old and new `Cartesia-Version`s on the socket and
 * over HTTP. Each test asserts what the framework depends on.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { EspeakPool } from '../src/engines/espeak/pool.js';
import { diagnostics, type SynthesisEnd } from '../src/synthesis/diagnostics.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket, type Event } from './helpers/ws-client.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };

/** Pipecat's `_build_msg` (src/pipecat/services/cartesia/tts.py). */
function pipecatMessage(text: string, contextId: string, options: { continue?: boolean; maxBufferDelayMs?: number | null } = {}): Record<string, unknown> {
  const message: Record<string, unknown> = {
    transcript: text,
    continue: options.continue ?? true,
    context_id: contextId,
    model_id: 'gepard-1.0',
    voice: { mode: 'id', id: 'sarah' },
    output_format: RAW,
    add_timestamps: true,
    use_normalized_timestamps: false,
  };
  if (options.maxBufferDelayMs !== null) message.max_buffer_delay_ms = options.maxBufferDelayMs ?? 0;
  message.language = 'en';
  return message;
}

/** LiveKit's `toCartesiaOptions(opts, true)` plus the per-sentence fields (livekit-plugins-cartesia, agents-js). */
function livekitMessage(text: string, contextId: string, last = false, voice = 'sarah'): Record<string, unknown> {
  return {
    model_id: 'gepard-1.0',
    voice: { mode: 'id', id: voice },
    output_format: RAW,
    language: null,
    max_buffer_delay_ms: 0,
    add_timestamps: true,
    context_id: contextId,
    transcript: last ? ' ' : `${text} `,
    continue: !last,
  };
}

/** LiveKit's server-message schemas (agents-js plugins/cartesia/src/types.ts); a message none of them parses is discarded. */
const words = z.object({ words: z.array(z.string()), start: z.array(z.number()), end: z.array(z.number()) });
const livekitSchema = z.union([
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('chunk'), data: z.string(), done: z.boolean(), status_code: z.number(), step_time: z.number(), context_id: z.string() }),
    z.object({ type: z.literal('timestamps'), done: z.boolean(), status_code: z.number(), context_id: z.string(), word_timestamps: words }),
    z.object({ type: z.literal('done'), done: z.boolean(), status_code: z.number(), context_id: z.string() }),
    z.object({ type: z.literal('flush_done'), done: z.boolean(), flush_done: z.boolean(), flush_id: z.number(), status_code: z.number(), context_id: z.string() }),
  ]),
  z.object({ type: z.string(), done: z.boolean(), error: z.string(), status_code: z.number(), context_id: z.string() }),
]);

/** What every framework relies on in a context's events. */
function assertWellFormed(events: Event[]): void {
  for (const event of events) {
    assert.equal(typeof event.context_id, 'string', `context_id on ${JSON.stringify(event).slice(0, 120)}`);
    assert.ok(['chunk', 'timestamps', 'done', 'flush_done', 'error'].includes(event.type), event.type);
    if (event.type === 'chunk') {
      assert.equal(typeof event.data, 'string');
      assert.equal(typeof event.step_time, 'number');
      assert.equal(event.done, false, 'done:true never rides on a chunk');
    }
    if (event.type === 'timestamps') {
      const { words: w, start, end } = event.word_timestamps;
      assert.ok(Array.isArray(w) && w.length > 0);
      assert.equal(start.length, w.length);
      assert.equal(end.length, w.length);
      assert.ok(start.every((t: unknown, i: number) => typeof t === 'number' && t <= end[i]));
    }
    if (event.done === true) assert.ok(event.type === 'done' || event.type === 'error', `done:true on ${event.type}`);
  }
}

async function key(): Promise<{ 'x-api-key': string }> {
  return { 'x-api-key': org.key };
}

describe('Pipecat', () => {
  test('sentence mode: audio per sentence as it is sent, timestamps with words/start/end, "" ends it, the socket serves the next turn', { timeout: 30_000 }, async () => {
    // Pipecat puts the key and version in the query; the X-API-Key header works as well.
    const socket = await TestSocket.open(server.url, {}, `?api_key=${encodeURIComponent(org.key)}&cartesia_version=2026-03-01`);
    socket.send(pipecatMessage('Hello there, this is the first sentence. ', 'turn-1'));
    // max_buffer_delay_ms 0: spoken now, before any more text arrives.
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'turn-1');
    socket.send(pipecatMessage('And a second one follows it. ', 'turn-1'));
    socket.send(pipecatMessage('', 'turn-1', { continue: false }));
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'turn-1');
    const events = socket.of('turn-1');
    assertWellFormed(events);
    assert.equal(events.at(-1)!.type, 'done');
    assert.equal(events.filter((e) => e.type === 'done').length, 1);
    const spoken = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
    for (const word of ['Hello', 'first', 'second', 'follows']) assert.ok(spoken.some((w: string) => w.includes(word)), `${word} in ${spoken}`);
    // The next turn on the same socket.
    socket.send(pipecatMessage('Next turn. ', 'turn-2'));
    socket.send(pipecatMessage('', 'turn-2', { continue: false }));
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'turn-2');
    assert.equal(socket.closeCode, null);
    assertWellFormed(socket.events);
    socket.close();
  });

  test('token mode: unset max_buffer_delay_ms buffers an unfinished clause at most 3 s, then speaks it while tokens still arrive', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key(), '?cartesia_version=2026-03-01');
    const tokens = 'so this is a long stream of tokens with no punctuation at all that keeps on going and going for a while longer still'.split(' ');
    const first = Date.now();
    let firstAudioAt: number | null = null;
    let sent = 0;
    for (const token of tokens) {
      socket.send(pipecatMessage(`${token} `, 'tokens', { maxBufferDelayMs: null }));
      sent++;
      await sleep(150);
      if (firstAudioAt === null && socket.of('tokens', 'chunk').length > 0) firstAudioAt = Date.now();
      if (firstAudioAt !== null) break;
    }
    assert.ok(firstAudioAt !== null, `no audio after ${sent} tokens over ${Date.now() - first} ms`);
    const waited = firstAudioAt - first;
    assert.ok(waited >= 2900 && waited < 4500, `first audio after ${waited} ms`);
    assert.ok(sent < tokens.length, 'audio started while tokens were still arriving');
    // Punctuation ends a clause at once; "" ends the turn.
    for (const token of ['Then', ' a', ' sentence.', ' ']) socket.send(pipecatMessage(token, 'tokens', { maxBufferDelayMs: null }));
    socket.send(pipecatMessage('', 'tokens', { continue: false, maxBufferDelayMs: null }));
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'tokens', 20_000);
    assertWellFormed(socket.of('tokens'));
    socket.close();
  });

  test('interruption: cancel stops the context at once; the socket goes on', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key(), '?cartesia_version=2026-03-01');
    socket.send(pipecatMessage('This is a long answer that the user interrupts. '.repeat(20), 'interrupted'));
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'interrupted');
    socket.send({ context_id: 'interrupted', cancel: true });
    // Sent after the cancel, so the server handles the cancel first; one socket keeps its frames in order.
    socket.send(pipecatMessage('After the interruption. ', 'after'));
    socket.send(pipecatMessage('', 'after', { continue: false }));
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'after');
    const count = socket.of('interrupted').length;
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'after');
    assert.equal(socket.of('interrupted').length, count, 'nothing for the cancelled context once the next one speaks');
    assert.ok(!socket.events.some((e) => e.type === 'error'));
    socket.close();
  });

  test('POST /tts/bytes with X-API-Key and Cartesia-Version: exactly 200 and the whole body', { timeout: 20_000 }, async () => {
    const response = await fetch(`${server.url}/tts/bytes`, {
      method: 'POST',
      headers: { 'Cartesia-Version': '2026-03-01', 'X-API-Key': org.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model_id: 'gepard-1.0', transcript: 'Hello from Pipecat over HTTP.', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, language: 'en' }),
    });
    assert.equal(response.status, 200);
    const audio = Buffer.from(await response.arrayBuffer());
    assert.equal(audio.length, Number(response.headers.get('content-length')));
    assert.ok(audio.length / 2 / 24000 > 1, `${audio.length} bytes`);
  });
});

describe('LiveKit Agents', () => {
  test('sentences with a trailing space, language null, " " ends input: every message passes its schemas, done ends the turn', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key(), '?cartesia_version=2025-04-16');
    socket.send(livekitMessage('The first sentence of the answer.', 'lk-1'));
    socket.send(livekitMessage('The second sentence.', 'lk-1'));
    socket.send(livekitMessage('', 'lk-1', true));
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'lk-1');
    const events = socket.of('lk-1');
    for (const event of events) assert.ok(livekitSchema.safeParse(event).success, JSON.stringify(event).slice(0, 200));
    assertWellFormed(events);
    // It treats anything with `data` as audio and ends on any truthy `done`: only the last event may carry it.
    assert.deepEqual(events.map((e, i) => (e.done ? i : -1)).filter((i) => i >= 0), [events.length - 1]);
    assert.ok(events.every((e) => e.type === 'chunk' || !('data' in e)));
    socket.close();
  });

  test('a bad voice ends the turn: the error frame has an error string and done:true, so the plugin stops waiting', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url, { 'x-api-key': org.key, 'cartesia-version': '2025-04-16' });
    socket.send(livekitMessage('Hello there.', 'lk-bad', false, 'no-such-voice'));
    socket.send(livekitMessage('Second sentence.', 'lk-bad', false, 'no-such-voice'));
    socket.send(livekitMessage('', 'lk-bad', true, 'no-such-voice'));
    // The plugin's loop ends on `done` or an error with done:true once its input is closed.
    const events: Event[] = [];
    for (let i = 0; i < 3; i++) events.push(await socket.waitFor((e) => e.context_id === 'lk-bad' && !events.includes(e) && (e.type === 'done' || (typeof e.error === 'string' && e.done === true))));
    const error = events.find((e) => e.type === 'error')!;
    assert.ok(livekitSchema.options[1].safeParse(error).success, JSON.stringify(error));
    assert.equal(error.status_code, 404);
    assert.equal(error.error_code, 'voice_not_found');
    assert.match(error.error, /no-such-voice/);
    assert.equal(error.error, error.message);
    assert.match(error.request_id, /^req_/);
    assert.equal(socket.closeCode, null);
    socket.close();
  });

  test('an interrupted stream closes the socket: generation and billing stop at once, as with cancel', { timeout: 30_000 }, async () => {
    const payer = await newOrg(server, { credits: 100_000 });
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    const ends: SynthesisEnd[] = [];
    const onEnd = (message: unknown) => void ends.push(message as SynthesisEnd);
    diagnostics.end.subscribe(onEnd);
    try {
      // Twenty sentences, over a minute of speech: far more than is spoken before the close.
      const text = 'A long sentence that the agent is speaking when the user barges in and the stream closes.';
      const socket = await TestSocket.open(server.url, { 'x-api-key': payer.key }, '?cartesia_version=2025-04-16');
      for (let i = 0; i < 20; i++) socket.send(livekitMessage(text, 'lk-closed'));
      await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'lk-closed');
      const closedAt = Date.now();
      socket.ws.close(1000);
      await socket.waitForClose();
      const mine = () => ends.find((e) => e.instance === server.app.services.instanceId && e.orgId === payer.orgId);
      for (let i = 0; i < 200 && !mine(); i++) await sleep(10);
      const end = mine();
      assert.ok(end, 'the turn ended');
      assert.ok(Date.now() - closedAt < 2000, 'at once');
      assert.equal(end.aborted, true);
      assert.equal(end.status, 499);
      assert.ok(end.audioSeconds < 30, `${end.audioSeconds} s delivered of over a minute`);
      for (let i = 0; i < 100 && (pool.info().busy as number) > 0; i++) await sleep(10);
      assert.equal(pool.info().busy, 0, 'the engine job stopped');
      const { store } = server.app.services.accounts!;
      assert.equal(await store.ledger.reserved(payer.orgId), 0, 'no reservation left');
      const charged = async () => (await store.ledger.list(payer.orgId, { limit: 20 })).data.filter((r) => r.kind === 'charge').reduce((n, r) => n + (r.characters ?? 0), 0);
      // Billed for the text it had taken (the turn delivered audio): two batches, never more after the close.
      assert.equal(await charged(), 20 * (text.length + 1));
      assert.equal(end.charactersCharged, 20 * (text.length + 1));
      // A write queued behind any late charge: once it commits, a late charge would be in the ledger.
      const probe = await store.ledger.reserve({ id: `probe-${Date.now()}`, orgId: payer.orgId, credits: 0, ttlMs: 60_000 });
      if (probe.ok) await store.ledger.release(probe.reservation.id);
      assert.equal(await charged(), 20 * (text.length + 1));
      const { balance, sum } = await balanceOf(server, payer.orgId);
      assert.equal(balance, sum);
    } finally {
      diagnostics.end.unsubscribe(onEnd);
    }
  });
});

describe('what every framework sends', () => {
  test('a blank or empty final transcript as the only message of a context ends it with done, no error', { timeout: 20_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key());
    socket.send(livekitMessage('', 'only-space', true));
    socket.send(pipecatMessage('', 'only-empty', { continue: false }));
    socket.send({ ...pipecatMessage('\n \t', 'only-blank', { continue: false }) });
    for (const id of ['only-space', 'only-empty', 'only-blank']) assert.equal((await socket.waitFor((e) => e.context_id === id)).type, 'done');
    assert.ok(!socket.events.some((e) => e.type === 'error'));
    socket.close();
  });

  test('an oversized message is answered under its context, which it ends', { timeout: 20_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key(), '?cartesia_version=2025-04-16');
    socket.send(livekitMessage('A first sentence, still open.', 'huge'));
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'huge');
    socket.send(livekitMessage('x'.repeat(70_000), 'huge'));
    const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'huge');
    assert.equal(error.error_code, 'payload_too_large');
    assert.ok(livekitSchema.safeParse(error).success);
    socket.send(livekitMessage('y'.repeat(70_000), 'never-opened'));
    assert.equal((await socket.waitFor((e) => e.type === 'error' && e.context_id === 'never-opened')).error_code, 'payload_too_large');
    // Frames on one socket keep their order: whatever 'huge' still had to say came before this answer.
    assert.equal(socket.of('huge').at(-1)!.type, 'error', 'nothing more for that context');
    socket.close();
  });

  test('flush_id is echoed in flush_done; the voice may be a plain string or {id}', { timeout: 20_000 }, async () => {
    const socket = await TestSocket.open(server.url, await key());
    socket.send({ ...pipecatMessage('Flushed text.', 'flushes'), voice: 'sarah', flush: true, flush_id: 'f-7' });
    socket.send({ ...pipecatMessage('More text.', 'flushes'), voice: { id: 'sarah' }, flush: true, flush_id: 42 });
    socket.send({ ...pipecatMessage('Last.', 'flushes'), flush: true });
    socket.send(pipecatMessage('', 'flushes', { continue: false }));
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'flushes');
    assert.deepEqual(socket.of('flushes', 'flush_done').map((e) => e.flush_id), ['f-7', 42, 1]);
    socket.close();
  });
});

describe('Cartesia-Version error shapes', () => {
  const badVoice = (version: string | null) => {
    const headers: Record<string, string> = { 'x-api-key': org.key, 'content-type': 'application/json' };
    if (version) headers['cartesia-version'] = version;
    return fetch(`${server.url}/tts/bytes`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model_id: 'gepard-1.0', transcript: 'Hi.', voice: 'ghost', output_format: RAW }),
    });
  };

  test('HTTP: JSON from 2026-03-01 on and without a version; before it, the plain "Title: message" text', { timeout: 20_000 }, async () => {
    for (const version of ['2026-03-01', '2026-08-14', null]) {
      const response = await badVoice(version);
      assert.equal(response.status, 404);
      assert.match(response.headers.get('content-type')!, /^application\/json/);
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(body.error_code, 'voice_not_found');
      assert.equal(body.title, 'Voice not found');
      assert.equal(body.request_id, response.headers.get('x-request-id'));
    }
    for (const version of ['2024-06-10', '2024-11-13', '2025-04-16']) {
      const response = await badVoice(version);
      assert.equal(response.status, 404);
      assert.match(response.headers.get('content-type')!, /^text\/plain/);
      assert.match(await response.text(), /^Voice not found: voice ghost does not exist/);
      assert.match(response.headers.get('x-request-id')!, /^req_/);
      assert.equal(response.headers.get('x-should-retry'), 'false');
    }
  });

  test('a version that is not a date from 2024-06-10 on is 400 unsupported_version', { timeout: 20_000 }, async () => {
    for (const version of ['2024-06-09', 'latest', '2026-02-30', '20260301']) {
      const response = await badVoice(version);
      assert.equal(response.status, 400, version);
      assert.equal(((await response.json()) as Record<string, unknown>).error_code, 'unsupported_version');
    }
    await assert.rejects(TestSocket.open(server.url, await key(), '?cartesia_version=2023-01-01'), (err: any) => err.status === 400 && JSON.parse(err.body).error_code === 'unsupported_version');
  });

  test('WebSocket: error events carry error, error_code, title, message, status_code, context_id, done and request_id for old and new versions', { timeout: 20_000 }, async () => {
    for (const version of ['2024-06-10', '2025-04-16', '2026-03-01', '2026-08-14']) {
      const socket = await TestSocket.open(server.url, await key(), `?cartesia_version=${version}`);
      socket.send(livekitMessage('Hi.', 'v', false, 'ghost'));
      const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'v');
      assert.equal(error.error, error.message, version);
      assert.match(error.error, /ghost/);
      assert.equal(error.error_code, 'voice_not_found');
      assert.equal(error.title, 'Voice not found');
      assert.equal(error.status_code, 404);
      assert.equal(error.done, true);
      assert.match(error.request_id, /^req_/);
      socket.close();
    }
  });

  test('a refused upgrade answers in the version asked for; the query parameter wins over the header', { timeout: 20_000 }, async () => {
    const refused = (headers: Record<string, string>, query: string) =>
      TestSocket.open(server.url, { 'x-api-key': 'sk_wrong', ...headers }, query).then(
        () => assert.fail('upgraded'),
        (err: any) => err,
      );
    const old = await refused({ 'cartesia-version': '2026-03-01' }, '?cartesia_version=2025-04-16');
    assert.equal(old.status, 401);
    assert.match(old.body, /^Invalid API key: /);
    const fresh = await refused({ 'cartesia-version': '2025-04-16' }, '?cartesia_version=2026-03-01');
    assert.equal(JSON.parse(fresh.body).error_code, 'invalid_api_key');
    const header = await refused({ 'cartesia-version': '2024-11-13' }, '');
    assert.match(header.body, /^Invalid API key: /);
  });

  test('LiveKit\'s /tts/bytes: X-API-Key, an old version, no Content-Type, a chunked body → 200 audio', { timeout: 20_000 }, async () => {
    const url = new URL(server.url);
    const { status, bytes } = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const req = httpRequest({ hostname: url.hostname, port: url.port, path: '/tts/bytes', method: 'POST', headers: { 'X-API-Key': org.key, 'Cartesia-Version': '2025-04-16' } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve({ status: res.statusCode!, bytes }));
      });
      req.on('error', reject);
      req.write(JSON.stringify({ model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, language: 'en', max_buffer_delay_ms: 0, transcript: 'Hello from LiveKit.' }));
      req.end();
    });
    assert.equal(status, 200);
    assert.ok(bytes / 2 / 24000 > 0.5, `${bytes} bytes`);
  });
});
