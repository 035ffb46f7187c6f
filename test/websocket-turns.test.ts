/**
 * @module test/websocket-turns
 * Every WebSocket dialect's turn is opened by the core (`synthesis/open-turn`)
 * and a connection's contexts are kept by it (`synthesis/turn-contexts`):
 * while the server drains, a new context on a socket whose turn is still open
 * is refused with `not_ready` in each dialect's shape, and the open turn ends
 * whole; a context that ended is remembered (a late cancel for it is no
 * error), and one ElevenLabs refused is told once until the client opens it
 * again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const BASE = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } };
const MULTI = '/v1/text-to-speech/sarah/multi-stream-input';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

test('a draining server refuses a new context with not_ready in each dialect\'s shape; the open turn ends whole', { timeout: 60_000 }, async () => {
  const leaving = await startServer();
  try {
    const native = await TestSocket.open(leaving.url);
    const eleven = await TestSocket.open(leaving.url, {}, '?output_format=pcm_16000', MULTI);
    native.send({ ...BASE, context_id: 'turn', transcript: 'The first half of a turn, ', continue: true });
    eleven.send({ text: ' ', context_id: 'turn' });
    eleven.send({ text: 'The first half of a turn, ', context_id: 'turn', flush: true });
    await native.waitFor((e) => e.type === 'chunk');
    await eleven.waitFor((e) => e.contextId === 'turn' && typeof e.audio === 'string');
    leaving.app.drain(0);
    native.send({ ...BASE, context_id: 'late', transcript: 'A turn begun after the drain.' });
    const refused = await native.waitFor((e) => e.context_id === 'late');
    assert.equal(refused.type, 'error');
    assert.equal(refused.error_code, 'not_ready');
    assert.equal(refused.status_code, 503);
    assert.match(refused.request_id, /^req_/);
    eleven.send({ text: ' ', context_id: 'late' });
    const elevenRefused = await eleven.waitFor((e) => e.contextId === 'late');
    assert.equal(elevenRefused.code, 503);
    assert.equal(typeof elevenRefused.error, 'string');
    // The turns open before the drain go on to their end, then the sockets close with 1001.
    native.send({ ...BASE, context_id: 'turn', transcript: 'and the second half.', continue: false });
    eleven.send({ text: 'and the second half. ', context_id: 'turn' });
    eleven.send({ context_id: 'turn', close_context: true });
    assert.equal(await native.waitForClose(20_000), 1001);
    assert.equal(await eleven.waitForClose(20_000), 1001);
    assert.equal(native.events.filter((e) => e.type === 'done' && e.context_id === 'turn').length, 1);
    assert.equal(eleven.events.filter((e) => e.contextId === 'turn' && e.isFinal).length, 1);
    assert.deepEqual(native.events.filter((e) => e.type === 'error').map((e) => e.context_id), ['late']);
  } finally {
    await leaving.close();
  }
});

test('a context that ended is remembered: a late cancel for it is no error, one for an id never seen is context_not_found', { timeout: 30_000 }, async () => {
  const socket = await TestSocket.open(server.url);
  try {
    socket.send({ ...BASE, context_id: 'spoken', transcript: 'Short.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'spoken', 20_000);
    socket.send({ context_id: 'spoken', cancel: true });
    socket.send({ context_id: 'never', cancel: true });
    // Messages are answered in order: by the second's error, the first's would have come.
    assert.equal((await socket.waitFor((e) => e.context_id === 'never')).error_code, 'context_not_found');
    assert.deepEqual(socket.events.filter((e) => e.type === 'error').map((e) => e.context_id), ['never']);
  } finally {
    socket.close();
  }
});

test('ElevenLabs: a context refused when it opened is told once; opening it again tries afresh', { timeout: 30_000 }, async () => {
  const socket = await TestSocket.open(server.url, {}, '?output_format=pcm_16000', MULTI);
  try {
    const bad = { text: ' ', context_id: 'bad', generation_config: { chunk_length_schedule: [5] } };
    socket.send(bad);
    socket.send({ text: 'Text for the refused context. ', context_id: 'bad' });
    socket.send({ text: '', context_id: 'bad', flush: true });
    socket.send(bad);
    socket.send({ context_id: 'never', close_context: true });
    // Answered in order: by the probe's error, every answer for `bad` has come.
    await socket.waitFor((e) => e.contextId === 'never');
    const errors = socket.events.filter((e) => e.contextId === 'bad');
    assert.equal(errors.length, 2, JSON.stringify(errors));
    assert.ok(errors.every((e) => e.code === 400 && /chunk_length_schedule/.test(e.message)), JSON.stringify(errors));
  } finally {
    socket.ws.close();
  }
});
