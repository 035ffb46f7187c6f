/**
 * @module test/server.drain
 * A server that is leaving (SIGTERM: `app.drain()`) tells its keep-alive
 * clients so: every answer from then on says `Connection: close` and its
 * connection closes once it is sent, so the client's next request opens a
 * connection elsewhere; a connection idle for more than a moment is closed at
 * once, and one idle for less is left for its next answer to close. An
 * answer that began before the drain closes its connection when it ends. A
 * connection the server closes counts until its client has read the last
 * byte and closed it too, and the server's close waits for that. WebSocket
 * clients of every dialect get 1001 once their turn has ended; no turn is cut.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { eventually } from './helpers/redis.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

function get(agent: Agent, path = '/healthz'): Promise<{ response: IncomingMessage; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ response, socket: req.socket as Socket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves once `socket` has closed; fails after `ms`. */
async function closed(socket: Socket, ms = 5_000): Promise<void> {
  if (socket.destroyed) return;
  await once(socket, 'close', { signal: AbortSignal.timeout(ms) }).catch(() => assert.fail('the connection stayed open'));
}

test('from the drain on, every answer says Connection: close and its connection closes; idle ones are closed at once', { timeout: 30_000 }, async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const recent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const gauge = async (name: string) => (await server.app.services.metrics!.registry.getSingleMetric(name)!.get()).values;
    assert.deepEqual((await gauge('voicegate_draining')).map((v) => v.value), [0]);
    const first = await get(agent);
    assert.equal(first.response.headers.connection, 'keep-alive');
    const idle = first.socket;
    const kept = (await get(recent)).socket;
    // A connection idle for at least 0 ms is closed at once (the server's default moment is 1 s);
    // drain(60 s) first: a connection idle for less than the moment is left open.
    server.app.drain(60_000);
    assert.equal(idle.destroyed, false, 'a connection idle for less than the moment stays open');
    assert.deepEqual((await gauge('voicegate_draining')).map((v) => v.value), [1]);
    const connections = Object.fromEntries((await gauge('voicegate_http_connections')).map((v) => [v.labels.state, v.value]));
    assert.deepEqual(connections, { busy: 0, closing: 0, idle: 2 });
    const answered = await get(recent);
    assert.equal(answered.socket, kept, 'the recent connection was reused');
    assert.equal(answered.response.headers.connection, 'close');
    await closed(kept);
    server.app.drain(0);
    await closed(idle);
    // The next request opens a new connection, and is answered (and closed) as well.
    const next = await get(agent);
    assert.notEqual(next.socket, idle);
    assert.equal(next.response.statusCode, 200);
    assert.equal(next.response.headers.connection, 'close');
    await closed(next.socket);
  } finally {
    agent.destroy();
    recent.destroy();
  }
});

/** A POST of `body` to `path` on a keep-alive agent; resolves with the response, its body unread. */
function post(url: string, agent: Agent, path: string, body: unknown): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Reads a response to its end; resolves with its length, rejects if it is cut. */
function readAll(response: IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    response.on('data', (chunk: Buffer) => (bytes += chunk.length));
    response.once('end', () => resolve(bytes));
    response.once('aborted', () => reject(new Error(`cut after ${bytes} bytes`)));
    response.once('error', reject);
  });
}

const RAW_8K = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 };

test('answers begun before and during the drain close their connections as they end; the close waits until each client has read its last byte', { timeout: 60_000 }, async () => {
  const leaving = await startServer();
  const before = new Agent({ keepAlive: true, maxSockets: 1 });
  const during = new Agent({ keepAlive: true, maxSockets: 1 });
  let closedAt = 0;
  try {
    // About 80 KB of audio: it fits in the sockets' buffers, so the server has written all of it
    // (and, before lingering closes, would have closed the connection) long before the client reads.
    const body = ttsBody({ transcript: 'A stream heard to its very end, whenever it began. '.repeat(4), output_format: RAW_8K });
    const expected = await readAll(await post(leaving.url, before, '/tts/bytes', body));
    const early = await post(leaving.url, before, '/tts/bytes', body);
    assert.equal(early.headers.connection, 'keep-alive');
    early.pause();
    leaving.app.drain(0);
    const late = await post(leaving.url, during, '/tts/bytes', body);
    assert.equal(late.headers.connection, 'close');
    late.pause();
    // Written and ended by the server, unread by their clients: the connections are closing, not closed.
    const lingering = () => {
      const { http } = leaving.app.progress();
      return http.open === 2 && http.closing === 2;
    };
    assert.ok(await eventually(lingering, 10_000), `the connections linger: ${JSON.stringify(leaving.app.progress())}`);
    // The listener's close (which closes idle connections) leaves them be, and waits for them.
    const closing = leaving.app.close().then(() => (closedAt = performance.now()));
    assert.ok(await eventually(() => !leaving.app.http.server.listening, 10_000), 'the listener closed');
    assert.ok(lingering(), `the connections still linger once the listener has closed: ${JSON.stringify(leaving.app.progress())}`);
    assert.equal(closedAt, 0, 'the server has not closed while its clients have answers unread');
    const readAt = performance.now();
    assert.deepEqual(await Promise.all([early, late].map((response) => readAll((response.resume(), response)))), [expected, expected], 'every byte arrived');
    await closing;
    assert.ok(closedAt >= readAt, 'the server closed after its clients read their answers');
    // A socket's own 'close' event, which the count follows, may come a turn after the close resolved.
    const ended = () => JSON.stringify(leaving.app.progress().http) === JSON.stringify({ open: 0, busy: 0, closing: 0 });
    assert.ok(await eventually(ended, 2_000), `every connection ended: ${JSON.stringify(leaving.app.progress().http)}`);
  } finally {
    before.destroy();
    during.destroy();
    if (!closedAt) await leaving.close();
  }
});

test('WebSockets of both dialects: 1001 once their turn has ended, never in the middle of one; quiet ones at once', { timeout: 60_000 }, async () => {
  const leaving = await startServer();
  try {
    const format = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 };
    const context = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: format, context_id: 'turn' };
    const native = await TestSocket.open(leaving.url);
    const quiet = await TestSocket.open(leaving.url);
    const eleven = await TestSocket.open(leaving.url, {}, '?output_format=pcm_16000', '/v1/text-to-speech/sarah/multi-stream-input');
    // A turn begun on each, waiting for the client's next text.
    native.send({ ...context, transcript: 'The first half of a turn, ', continue: true });
    eleven.send({ text: ' ', context_id: 'turn' });
    eleven.send({ text: 'The first half of a turn, ', context_id: 'turn', flush: true });
    await native.waitFor((e) => e.type === 'chunk');
    // The ElevenLabs context has spoken all it was sent (its alignment reached the last word): it
    // is making no audio now, only waiting for text, and is still in its turn.
    const spoken = () => eleven.events.flatMap((e) => (e.contextId === 'turn' && e.alignment ? e.alignment.chars : [])).join('');
    await eleven.waitFor(() => spoken().includes('turn,'));
    leaving.app.drain(0);
    assert.equal(await quiet.waitForClose(), 1001, 'a socket with no turn closes at once');
    // The open turns go on: their second halves are spoken, then the sockets close.
    native.send({ ...context, transcript: 'and the second half, after the drain began.', continue: false });
    eleven.send({ text: 'and the second half, after the drain began. ', context_id: 'turn' });
    eleven.send({ context_id: 'turn', close_context: true });
    assert.equal(await native.waitForClose(20_000), 1001);
    assert.equal(await eleven.waitForClose(20_000), 1001);
    assert.equal(native.events.filter((e) => e.type === 'done').length, 1, 'the native turn ended whole');
    assert.ok(!native.events.some((e) => e.type === 'error'), JSON.stringify(native.events.filter((e) => e.type === 'error')));
    assert.equal(eleven.events.filter((e) => e.isFinal).length, 1, 'the ElevenLabs context ended whole');
    assert.ok(!eleven.events.some((e) => e.error), JSON.stringify(eleven.events.filter((e) => e.error)));
    const seconds = (events: Record<string, unknown>[], field: string) => events.reduce((n, e) => n + (typeof e[field] === 'string' ? Buffer.from(e[field] as string, 'base64').length : 0), 0) / 32000;
    assert.ok(seconds(native.events, 'data') > 3, `native: ${seconds(native.events, 'data')} s of audio`);
    assert.ok(seconds(eleven.events, 'audio') > 3, `ElevenLabs: ${seconds(eleven.events, 'audio')} s of audio`);
  } finally {
    await leaving.close();
  }
});
