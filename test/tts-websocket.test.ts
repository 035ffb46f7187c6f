/**
 * @module test/tts-websocket
 * The WebSocket with a raw `ws` client: generations, `continue` streaming
 * with flushes, cancel, timestamps, interleaved contexts, every kind of bad
 * message answered with an error event on a socket that stays usable,
 * authentication before the upgrade, per-turn batch billing, idle close and
 * backpressure from a slow reader.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EspeakPool } from '../src/engines/espeak/pool.js';
import { diagnostics, type SynthesisEnd } from '../src/synthesis/diagnostics.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { until } from './helpers/poll.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, server: { websocket: { idleTimeoutMs: 1500 } } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const BASE = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } };

async function open(auth: Record<string, string> = org.auth): Promise<TestSocket> {
  return TestSocket.open(server.url, auth);
}

describe('generation', () => {
  test("a context's later clauses reach the engine as continuing what the client is playing", { timeout: 20_000 }, async () => {
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    const inputs: { text: string; playback?: { startedAt: number; seconds: number } }[] = [];
    // 16 kHz output is resampled and encoded in the engine's workers (engines/staged).
    const original = pool.synthesizeStaged;
    pool.synthesizeStaged = function (input, stage, signal) {
      inputs.push({ text: input.text, playback: input.playback });
      return original.call(this, input, stage, signal);
    };
    try {
      const socket = await open();
      const ctx = { ...BASE, context_id: 'playback' };
      socket.send({ ...ctx, transcript: 'The first sentence is here. ', continue: true });
      await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'playback');
      socket.send({ ...ctx, transcript: 'The second one follows.', continue: false });
      await socket.waitFor((e) => e.type === 'done' && e.context_id === 'playback');
      socket.close();
      const mine = inputs.filter((i) => /first sentence|second one/.test(i.text));
      assert.equal(mine.length, 2);
      assert.equal(mine[0].playback, undefined, 'the first clause is a new turn');
      assert.ok(mine[1].playback && mine[1].playback.startedAt > 0, 'the second continues it');
      assert.ok(mine[1].playback.seconds > 0.8, `${mine[1].playback.seconds} s were sent before the second clause`);
    } finally {
      pool.synthesizeStaged = original;
    }
  });

  test('a long call: many turns on one socket leave nothing behind on it (no listener per finished turn)', { timeout: 60_000 }, async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning));
    process.on('warning', onWarning);
    try {
      const socket = await open();
      // Node warns once a signal holds more than 10 listeners: 15 turns would pass that if each kept one.
      for (let turn = 0; turn < 15; turn++) {
        socket.send({ ...BASE, context_id: `turn-${turn}`, transcript: 'Yes.' });
        await socket.waitFor((e) => e.type === 'done' && e.context_id === `turn-${turn}`);
      }
      socket.close();
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings.map((w) => w.message), []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('a single message speaks and ends with done; every event carries the context id', async () => {
    const socket = await open();
    socket.send({ ...BASE, context_id: 'one', transcript: 'Hello from the socket.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'one');
    const audio = socket.audio('one');
    assert.ok(audio.length / 2 / 16000 > 0.8, `${audio.length} bytes`);
    assert.ok(socket.events.every((e) => 'context_id' in e));
    assert.ok(socket.of('one', 'chunk').every((e) => typeof e.data === 'string' && e.status_code === 206 && e.done === false));
    socket.close();
  });

  test('continue pushes keep one utterance; flush answers flush_done with increasing ids; an empty final message ends it', async () => {
    const socket = await open();
    const ctx = { ...BASE, context_id: 'stream', add_timestamps: true };
    socket.send({ ...ctx, transcript: 'The first ', continue: true });
    socket.send({ ...ctx, transcript: 'sentence is here. The second ', continue: true });
    socket.send({ ...ctx, transcript: 'one follows.', continue: true, flush: true });
    socket.send({ ...ctx, transcript: 'And a third.', continue: true, flush: true });
    socket.send({ ...ctx, transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'stream');
    const flushes = socket.of('stream', 'flush_done');
    assert.deepEqual(flushes.map((e) => e.flush_id), [1, 2]);
    const types = socket.of('stream').map((e) => e.type);
    assert.ok(types.indexOf('flush_done') < types.lastIndexOf('chunk'), 'audio after the first flush');
    assert.equal(types.at(-1), 'done');
    const words = socket.of('stream', 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['The', 'first', 'sentence', 'is', 'here.', 'The', 'second', 'one', 'follows.', 'And', 'a', 'third.']);
    const starts = socket.of('stream', 'timestamps').flatMap((e) => e.word_timestamps.start);
    assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'timestamps run on the turn clock');
    const seconds = socket.audio('stream').length / 2 / 16000;
    assert.ok(starts.at(-1)! < seconds, 'timestamps fall inside the audio');
    socket.close();
  });

  test('first audio comes after the first clause, before the rest of the text arrives', async () => {
    const socket = await open();
    const ctx = { ...BASE, context_id: 'early' };
    socket.send({ ...ctx, transcript: 'This first clause is complete. And then', continue: true });
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'early');
    socket.send({ ...ctx, transcript: ' the rest.', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'early');
    socket.close();
  });

  test('two contexts interleaved on one socket are answered separately', async () => {
    const socket = await open();
    socket.send({ ...BASE, context_id: 'left', transcript: 'Left context speaking now, ', continue: true });
    socket.send({ ...BASE, context_id: 'right', transcript: 'Right context here.', continue: false });
    socket.send({ ...BASE, context_id: 'left', transcript: 'and finishing.', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'left');
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'right');
    assert.ok(socket.audio('left').length > 0 && socket.audio('right').length > 0);
    socket.close();
  });

  test('cancel stops the audio of that context and frees the engine', async () => {
    const socket = await open();
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    socket.send({ ...BASE, model_id: 'omnivoice', context_id: 'long', transcript: 'A long text that will be cancelled soon. '.repeat(40) });
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'long');
    socket.send({ context_id: 'long', cancel: true });
    await sleep(100);
    const count = socket.of('long').length;
    await sleep(300);
    assert.equal(socket.of('long').length, count, 'nothing more for the cancelled context');
    assert.ok(!socket.of('long').some((e) => e.type === 'done'));
    await until(() => pool.info().busy === 0, { timeoutMs: 1_000, what: 'the engine freed' });
    // A cancel for a context that just ended is not an error.
    socket.send({ context_id: 'long', cancel: true });
    socket.send({ ...BASE, context_id: 'after', transcript: 'Still usable.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'after');
    assert.ok(!socket.events.some((e) => e.type === 'error'));
    socket.close();
  });

  test('a client that closes mid-turn has left (499, aborted) as soon as a send fails, before the socket has closed', { timeout: 20_000 }, async () => {
    const payer = await newOrg(server, { credits: 100_000 });
    let ended: (end: SynthesisEnd) => void = () => {};
    const turnEnd = new Promise<SynthesisEnd>((resolve) => (ended = resolve));
    const onEnd = (message: unknown) => {
      if ((message as SynthesisEnd).orgId === payer.orgId) ended(message as SynthesisEnd);
    };
    diagnostics.end.subscribe(onEnd);
    try {
      const socket = await open(payer.auth);
      socket.send({ ...BASE, context_id: 'gone', transcript: 'A long text that the client will not wait for. '.repeat(40) });
      await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'gone');
      // The close frame goes out, but the client no longer reads: the server sees CLOSING and its
      // sends fail, while its close event waits for a TCP close that does not come yet.
      const raw = (socket.ws as unknown as { _socket: { pause(): void } })._socket;
      raw.pause();
      socket.ws.close(1000);
      const end = await turnEnd;
      assert.deepEqual({ status: end.status, aborted: end.aborted }, { status: 499, aborted: true });
      socket.ws.terminate();
    } finally {
      diagnostics.end.unsubscribe(onEnd);
    }
  });
});

describe('bad messages get an error event and the socket stays usable', () => {
  test('malformed JSON, a binary frame, an oversized message, an unknown cancel, and a message over the limit', async () => {
    const socket = await open();
    socket.send('{"model_id": ');
    await socket.waitFor((e) => e.type === 'error' && e.error_code === 'invalid_json');
    socket.ws.send(Buffer.from([0, 1, 2]), { binary: true });
    await socket.waitFor((e) => e.type === 'error' && e.error_code === 'invalid_message');
    socket.send({ ...BASE, context_id: 'big', transcript: 'x'.repeat(70_000) });
    await socket.waitFor((e) => e.type === 'error' && e.error_code === 'payload_too_large');
    socket.send({ context_id: 'never-opened', cancel: true });
    const unknown = await socket.waitFor((e) => e.type === 'error' && e.error_code === 'context_not_found');
    assert.equal(unknown.context_id, 'never-opened');
    socket.send({ ...BASE, context_id: 'too-long', transcript: '😀'.repeat(2001) });
    const tooLong = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'too-long');
    assert.equal(tooLong.error_code, 'input_too_long');
    assert.equal(tooLong.status_code, 400);
    assert.equal(tooLong.done, true);
    assert.match(tooLong.request_id, /^req_/);
    socket.send({ ...BASE, context_id: 'bad-voice', transcript: 'Hi', voice: { mode: 'id', id: 'ghost' } });
    assert.equal((await socket.waitFor((e) => e.context_id === 'bad-voice')).error_code, 'voice_not_found');
    socket.send({ ...BASE, context_id: 'wav', transcript: 'Hi', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } });
    assert.equal((await socket.waitFor((e) => e.context_id === 'wav')).error_code, 'invalid_output_format');
    // An over-limit message in an open context ends that context with an error.
    socket.send({ ...BASE, context_id: 'open', transcript: 'Begin ', continue: true });
    socket.send({ ...BASE, context_id: 'open', transcript: 'y'.repeat(2001), continue: true });
    assert.equal((await socket.waitFor((e) => e.context_id === 'open' && e.type === 'error')).error_code, 'input_too_long');
    socket.send({ ...BASE, context_id: 'fine', transcript: 'Still here.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'fine');
    assert.equal(socket.closeCode, null);
    socket.close();
  });
});

describe('authentication and lifetime', () => {
  test('the key is checked before the upgrade: header or api_key query; missing or wrong → 401', async () => {
    await assert.rejects(TestSocket.open(server.url, {}), (err: any) => err.status === 401 && JSON.parse(err.body).error_code === 'missing_api_key');
    await assert.rejects(TestSocket.open(server.url, { authorization: 'Bearer sk_wrong' }), (err: any) => err.status === 401 && JSON.parse(err.body).error_code === 'invalid_api_key');
    const viaQuery = await TestSocket.open(server.url, {}, `?cartesia_version=2026-08-14&api_key=${encodeURIComponent(org.key)}`);
    viaQuery.send({ ...BASE, context_id: 'q', transcript: 'Query key.' });
    await viaQuery.waitFor((e) => e.type === 'done' && e.context_id === 'q');
    viaQuery.close();
    await assert.rejects(TestSocket.open(server.url, {}, '?api_key=sk_nope'), (err: any) => err.status === 401);
  });

  test('an idle connection is closed with code 4000 and a reason', async () => {
    const socket = await open();
    const code = await socket.waitForClose(5000);
    assert.equal(code, 4000);
    assert.match(socket.closeReason, /idle/);
  });
});

describe('billing per turn', () => {
  test('a turn is billed in 1,000-character batches and the remainder at its end', async () => {
    const payer = await newOrg(server, { credits: 100_000 });
    const socket = await open(payer.auth);
    const piece = 'Words keep arriving in this long turn. '.repeat(13).slice(0, 500);
    for (let i = 0; i < 5; i++) socket.send({ ...BASE, model_id: 'omnivoice', context_id: 'turn', transcript: piece, continue: true });
    socket.send({ ...BASE, model_id: 'omnivoice', context_id: 'turn', transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'turn', 30_000);
    // The last batch is charged once its audio has gone out: read the ledger once it holds all three.
    const { ledger } = server.app.services.accounts!.store;
    const rows = await until(
      async () => {
        const charges = (await ledger.list(payer.orgId, { limit: 10 })).data.filter((r) => r.kind === 'charge');
        return charges.length >= 3 && charges;
      },
      { what: "the turn's three charges" },
    );
    assert.deepEqual(rows.map((r) => r.characters).reverse(), [1000, 1000, 500]);
    assert.ok(rows.every((r) => r.endpoint === 'tts.websocket'));
    assert.deepEqual(await balanceOf(server, payer.orgId), { balance: 100_000 - 2500, sum: 100_000 - 2500 });
    socket.close();
  });

  test('a turn that runs out of balance ends with insufficient_credits before its next batch', async () => {
    const payer = await newOrg(server, { credits: 900 });
    const socket = await open(payer.auth);
    const piece = 'a few words '.repeat(50); // 600 characters
    socket.send({ ...BASE, context_id: 'broke', transcript: 'First clause is spoken. ' + piece, continue: true });
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'broke');
    // 1,224 would reach into batch 1, but batch 0 (1,000 credits) is still reserved against 900.
    socket.send({ ...BASE, context_id: 'broke', transcript: piece, continue: true });
    const error = await socket.waitFor((e) => e.context_id === 'broke' && e.type === 'error');
    assert.equal(error.error_code, 'insufficient_credits');
    assert.equal(error.status_code, 402);
    // Settled or dropped, no reservation is left once the turn's books are written.
    await until(async () => (await server.app.services.accounts!.store.ledger.reserved(payer.orgId)) === 0, { what: "the turn's reservation settled" });
    const { balance, sum } = await balanceOf(server, payer.orgId);
    assert.equal(balance, sum);
    assert.equal(balance, 900 - 624, 'billed for the text it accepted, not the refused message');
    assert.equal(await server.app.services.accounts!.store.ledger.reserved(payer.orgId), 0, 'no reservation left');
    // The remaining 276 credits still open a turn; once it is charged below zero, none opens.
    const drain = 'x'.repeat(300);
    socket.send({ ...BASE, context_id: 'last', transcript: drain });
    assert.equal((await socket.waitFor((e) => e.context_id === 'last' && (e.type === 'done' || e.type === 'error'))).type, 'done');
    socket.send({ ...BASE, context_id: 'next', transcript: 'Anyone?' });
    assert.equal((await socket.waitFor((e) => e.context_id === 'next')).error_code, 'insufficient_credits');
    socket.close();
  });

  test('a turn cancelled before any audio is not charged', async () => {
    const payer = await newOrg(server, { credits: 1000 });
    const socket = await open(payer.auth);
    socket.send({ ...BASE, context_id: 'quiet', transcript: 'no boundary yet', continue: true, max_buffer_delay_ms: 5000 });
    await sleep(50);
    socket.send({ context_id: 'quiet', cancel: true });
    await sleep(100);
    assert.deepEqual(await balanceOf(server, payer.orgId), { balance: 1000, sum: 1000 });
    socket.close();
  });
});

describe('backpressure', () => {
  test('a reader that stops reading pauses the engine instead of buffering the whole turn', async () => {
    const socket = await open();
    const pool = server.app.services.engines.get('espeak') as EspeakPool;
    socket.send({ ...BASE, model_id: 'omnivoice', context_id: 'slow', transcript: 'This is a long passage for a reader who stops reading. '.repeat(90), output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 48000 } });
    const jobsBefore = (pool.info().jobs as { submitted: number }).submitted;
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'slow');
    (socket.ws as any)._socket.pause();
    await sleep(1500);
    const info = pool.info();
    // 90 sentences, one engine job each: a stalled reader (socket buffers full) holds the engine a few sentences ahead.
    const jobs = (info.jobs as { submitted: number }).submitted - jobsBefore;
    assert.ok(jobs <= 10, `${jobs} of 90 sentence jobs ran for a reader who stopped reading`);
    assert.ok((info.bufferedChunks as number) <= 33, `engine buffered ${info.bufferedChunks} chunks`);
    (socket.ws as any)._socket.resume();
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'slow', 60_000);
    const seconds = socket.audio('slow').length / 4 / 48000;
    assert.ok(seconds > 120, `${seconds} s of audio all arrived`);
    socket.close();
  });
});

describe('shutdown', () => {
  test('closing the server lets an open turn finish, then closes the socket with 1001', async () => {
    const own = await startServer();
    const socket = await TestSocket.open(own.url);
    socket.send({ ...BASE, context_id: 'last', transcript: 'A turn that is still speaking when the server is asked to stop. '.repeat(4) });
    await socket.waitFor((e) => e.type === 'chunk' && e.context_id === 'last');
    const closing = own.close();
    const code = await socket.waitForClose(15_000);
    await closing;
    assert.ok(socket.events.some((e) => e.type === 'done' && e.context_id === 'last'), 'the turn finished first');
    assert.equal(code, 1001);
    assert.match(socket.closeReason, /shutting down/);
  });
});
