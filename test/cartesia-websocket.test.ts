/**
 * @module test/cartesia-websocket
 * The official Cartesia SDK's WebSocket client, loaded the CommonJS way (its
 * Node transport), dialling `wss://` on the REST host and port as it always
 * does, trusting the server's development CA: a generation, `continue`
 * pushes with a flush and timestamps, cancel, and two contexts interleaved.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { newOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';

const require = createRequire(import.meta.url);
const { Cartesia } = require('@cartesia/cartesia-js') as typeof import('@cartesia/cartesia-js');

let server: TestServer;
let ws: any;
const errors: unknown[] = [];
const seen: Record<string, any>[] = [];

const OPTIONS = { model_id: 'gepard-1.0', voice: { mode: 'id' as const, id: 'emma' }, output_format: { container: 'raw' as const, encoding: 'pcm_s16le' as const, sample_rate: 24000 as const } };

before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, server: { tls: { selfSigned: true } } } });
  assert.match(server.url, /^https:/);
  const org = await newOrg(server);
  const client = new Cartesia({ apiKey: org.key, baseURL: server.url });
  ws = await client.tts.websocket({ ca: server.ca });
  ws.on('error', (err: unknown) => errors.push(err));
  ws.on('event', (event: Record<string, any>) => seen.push(event));
});
after(async () => {
  ws?.close({ code: 1000, reason: 'OK' });
  await server.close();
});

test('ws.generate streams chunks with decoded audio and ends on done', async () => {
  let bytes = 0;
  let last = '';
  for await (const event of ws.generate({ ...OPTIONS, transcript: 'Hello from the Cartesia SDK over a secure socket.' })) {
    if (event.type === 'chunk') bytes += event.audio.length;
    last = event.type;
  }
  assert.equal(last, 'done');
  assert.ok(bytes / 2 / 24000 > 1.5, `${bytes} bytes`);
  assert.deepEqual(errors, []);
});

test('a context: continue pushes, a flush, timestamps, no_more_inputs', async () => {
  const ctx = ws.context({ ...OPTIONS, contextId: 'sdk-ctx', add_timestamps: true });
  await ctx.push({ transcript: 'The agent starts ' });
  await ctx.push({ transcript: 'speaking here. Then it ', flush: true });
  await ctx.push({ transcript: 'keeps on going.' });
  await ctx.no_more_inputs();
  const events: any[] = [];
  for await (const event of ctx.receive({ timeout: 10_000 })) events.push(event);
  assert.equal(events.at(-1).type, 'done');
  const flushes = events.filter((e) => e.type === 'flush_done');
  assert.equal(flushes.length, 1);
  assert.equal(flushes[0].flush_id, 1);
  const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
  assert.deepEqual(words, ['The', 'agent', 'starts', 'speaking', 'here.', 'Then', 'it', 'keeps', 'on', 'going.']);
  assert.ok(events.every((e) => e.context_id === 'sdk-ctx'));
});

test('cancel stops the context', async () => {
  const ctx = ws.context({ ...OPTIONS, contextId: 'sdk-cancel' });
  await ctx.send({ transcript: 'This long answer is going to be interrupted by the caller. '.repeat(30) });
  for await (const event of ctx.receive({ timeout: 10_000 })) {
    if (event.type === 'chunk') break;
  }
  await ctx.cancel();
  await sleep(150);
  const count = seen.filter((e) => e.context_id === 'sdk-cancel').length;
  await sleep(400);
  assert.equal(seen.filter((e) => e.context_id === 'sdk-cancel').length, count, 'no events after cancel settled');
  assert.ok(!seen.some((e) => e.context_id === 'sdk-cancel' && e.type === 'done'));
});

test('two contexts interleaved on one socket', async () => {
  const a = ws.context({ ...OPTIONS, contextId: 'sdk-a' });
  const b = ws.context({ ...OPTIONS, contextId: 'sdk-b', voice: { mode: 'id', id: 'michael' } });
  await a.push({ transcript: 'First speaker begins, ' });
  await b.push({ transcript: 'Second speaker replies. ' });
  await a.push({ transcript: 'and then finishes.' });
  await a.no_more_inputs();
  await b.no_more_inputs();
  const collect = async (ctx: any) => {
    let bytes = 0;
    let last = '';
    for await (const event of ctx.receive({ timeout: 10_000 })) {
      if (event.type === 'chunk') bytes += event.audio.length;
      last = event.type;
    }
    return { bytes, last };
  };
  const [ra, rb] = await Promise.all([collect(a), collect(b)]);
  assert.equal(ra.last, 'done');
  assert.equal(rb.last, 'done');
  assert.ok(ra.bytes > 24000 && rb.bytes > 24000);
  assert.deepEqual(errors, []);
});
