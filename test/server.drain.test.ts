/**
 * @module test/server.drain
 * A server that is leaving (SIGTERM: `app.drain()`) tells its keep-alive
 * clients so: every answer from then on says `Connection: close` and its
 * connection closes once it is sent, so the client's next request opens a
 * connection elsewhere; a connection idle for more than a moment is closed at
 * once, and one idle for less is left for its next answer to close.
 */
import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.js';

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
function closed(socket: Socket, ms = 5_000): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the connection stayed open')), ms);
    socket.once('close', () => (clearTimeout(timer), resolve()));
  });
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
    assert.deepEqual(connections, { busy: 0, idle: 2 });
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
