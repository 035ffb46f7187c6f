/**
 * @module test/elevenlabs-websocket.faults
 * Both ElevenLabs WebSockets under abuse: bad JSON, binary and oversized
 * frames, a frame over the hard cap, unknown and reused context ids,
 * `close_context` for what is not open, `close_socket` mid-audio, a client
 * that stops reading and then leaves, and a stream of random messages.
 * After each, the server still serves, nothing is left in flight (no
 * synthesis, no connection, no reservation), and the books are exact: the
 * balance is the ledger's sum.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, test } from 'node:test';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/redis.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, server: { websocket: { maxMessageBytes: 4096 } } } as any });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const VOICE = 'sarah';

function open(name: 'stream-input' | 'multi-stream-input', query = '?output_format=pcm_16000'): Promise<TestSocket> {
  return TestSocket.open(server.url, { 'xi-api-key': org.key }, query, `/v1/text-to-speech/${VOICE}/${name}`);
}

/** Nothing in flight for the org and the books exact (a bounded poll). */
async function settled(): Promise<void> {
  const { activity, store } = server.app.services;
  const state = async () => {
    const { balance, sum } = await balanceOf(server, org.orgId);
    return { syntheses: activity.syntheses(org.orgId), websockets: activity.websockets(org.orgId), reserved: await store.ledger.reserved(org.orgId), exact: balance === sum };
  };
  const done = { syntheses: 0, websockets: 0, reserved: 0, exact: true };
  if (!(await eventually(async () => isDeepStrictEqual(await state(), done), 15_000))) assert.deepEqual(await state(), done);
}

/** The server still speaks: a whole stream-input turn. */
async function stillServes(): Promise<void> {
  const ws = await open('stream-input');
  ws.send({ text: ' ' });
  ws.send({ text: 'Still fine. ' });
  ws.send({ text: '' });
  assert.equal(await ws.waitForClose(20_000), 1000);
  assert.ok(ws.events.some((e) => e.audio));
  assert.equal(ws.events.filter((e) => e.isFinal).length, 1);
}

test('bad frames get an error message and the multi-stream socket stays usable', { timeout: 60_000 }, async () => {
  const ws = await open('multi-stream-input');
  ws.send('{not json');
  ws.send('[1, 2]');
  ws.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  ws.send({ text: 42, context_id: 'a' });
  ws.send({ text: 'hi', context_id: 17 });
  ws.send({ text: 'x'.repeat(5000), context_id: 'a' });
  ws.send({ context_id: 'never-opened', close_context: true });
  ws.send({ text: ' ', context_id: 'c', generation_config: { chunk_length_schedule: [1] } });
  await ws.waitFor(() => ws.events.filter((e) => e.error).length >= 8);
  assert.deepEqual(
    ws.events.map((e) => e.error),
    ['invalid_json', 'invalid_json', 'invalid_message', 'invalid_message', 'invalid_message', 'payload_too_large', 'context_not_found', 'invalid_message'],
  );
  ws.send({ text: ' ', context_id: 'ok' });
  ws.send({ text: 'After the noise. ', context_id: 'ok', flush: true });
  ws.send({ context_id: 'ok', close_context: true });
  await ws.waitFor((e) => e.isFinal && e.contextId === 'ok', 20_000);
  ws.close();
  await settled();
});

test('a frame over the hard cap closes that socket with 1009; the server goes on', { timeout: 60_000 }, async () => {
  const ws = await open('multi-stream-input');
  ws.send({ text: 'x'.repeat(2 << 20), context_id: 'big' });
  assert.equal(await ws.waitForClose(), 1009);
  await settled();
  await stillServes();
  await settled();
});

test('close_socket mid-audio stops every context; what was delivered is charged once, nothing else', { timeout: 60_000 }, async () => {
  const ws = await open('multi-stream-input');
  for (const id of ['p', 'q']) {
    ws.send({ text: ' ', context_id: id });
    ws.send({ text: 'A long answer that keeps going for a good while, sentence after sentence. '.repeat(20), context_id: id, flush: true });
  }
  await ws.waitFor((e) => e.audio && e.contextId === 'q', 20_000);
  ws.send({ close_socket: true });
  assert.equal(await ws.waitForClose(), 1000);
  await settled();
  await stillServes();
});

test('a client that stops reading, then leaves: nothing left behind', { timeout: 90_000 }, async () => {
  const ws = await open('stream-input', '?output_format=pcm_48000');
  ws.send({ text: ' ' });
  ws.send({ text: 'This is a long passage for a reader who stops reading. '.repeat(60), flush: true });
  await ws.waitFor((e) => e.audio);
  (ws.ws as any)._socket.pause();
  // Audio piles up unread in the client's socket, and then the client goes.
  const socket = (ws.ws as any)._socket as { readableLength: number };
  assert.ok(await eventually(() => socket.readableLength > 0, 15_000), 'audio arrived that the client did not read');
  ws.ws.terminate();
  await settled();
  await stillServes();
});

test('random messages on both protocols: no crash, nothing left in flight, the books exact', { timeout: 120_000 }, async () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const values = [' ', '', 'Hello. ', 'Some words, ', '<break time="200ms"/> ', null, 3, true, {}, [], 'x'.repeat(300)];
  for (const name of ['multi-stream-input', 'stream-input'] as const) {
    for (let round = 0; round < 3; round++) {
      const ws = await open(name);
      for (let i = 0; i < 60; i++) {
        const message: Record<string, unknown> = {};
        for (const key of ['text', 'context_id', 'flush', 'close_context', 'try_trigger_generation', 'voice_settings', 'xi_api_key', 'generation_config']) {
          if (random() < 0.4) message[key] = key === 'context_id' ? pick(['a', 'b', 'c', '', 5]) : pick(values);
        }
        if (random() < 0.05) message.close_socket = true;
        ws.send(random() < 0.05 ? '{"text": "unterminated' : message);
      }
      if (ws.closeCode === null) ws.close();
      await ws.waitForClose(20_000).catch(() => ws.ws.terminate());
    }
  }
  await settled();
  await stillServes();
  await settled();
});
