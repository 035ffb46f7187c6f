/**
 * @module test/concurrency
 * `GET /concurrency` in Cartesia's shape for the caller's organisation: the
 * organisation's limit, syntheses in flight (a WebSocket context waiting for
 * more text holds one) and open WebSocket connections; another
 * organisation's activity never shows; an access token does not read it;
 * without accounts it reports for `org_local`; a failing limit counter is
 * 503 `limits_unavailable`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LimitCounters } from '../src/limits/counters.js';
import { InProcessLimits } from '../src/limits/in-process.js';
import { newOrg } from './helpers/accounts.js';
import { startServer, ttsBody } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { until } from './helpers/poll.js';

type Concurrency = { tts_requests: { active: number; limit: number | null }; tts_websockets: { active: number; limit: number | null } };

async function concurrency(url: string, headers: Record<string, string> = {}): Promise<Concurrency> {
  const response = await fetch(url + '/concurrency', { headers });
  assert.equal(response.status, 200, await response.clone().text());
  // Requests and sockets; background work (tts_jobs) is the jobs suite's.
  const { tts_requests, tts_websockets } = (await response.json()) as Concurrency;
  return { tts_requests, tts_websockets };
}

/** The counts `read` answers once `check` holds (bounded). */
function countsWhen(read: () => Promise<Concurrency>, check: (c: Concurrency) => boolean): Promise<Concurrency> {
  return until(
    async () => {
      const counts = await read();
      return check(counts) && counts;
    },
    { timeoutMs: 10_000, what: 'the counts awaited' },
  );
}

const open = (contextId: string) => ({
  ...ttsBody({ transcript: 'Hello and ' }),
  output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 },
  context_id: contextId,
  continue: true,
  // Spoken at once; the context stays open for more text.
  max_buffer_delay_ms: 0,
});

test('the caller’s organisation: its limit, syntheses in flight and open WebSocket connections', { timeout: 30_000 }, async () => {
  const server = await startServer({ config: { accounts: { enabled: true } } });
  try {
    const limited = await newOrg(server, { maxConcurrent: 3 });
    const unlimited = await newOrg(server, { maxConcurrent: null });
    const idle = { tts_requests: { active: 0, limit: 3 }, tts_websockets: { active: 0, limit: null } };
    assert.deepEqual(await concurrency(server.url, limited.auth), idle);
    assert.deepEqual(await concurrency(server.url, unlimited.auth), { tts_requests: { active: 0, limit: null }, tts_websockets: { active: 0, limit: null } });

    const refused = await fetch(server.url + '/concurrency');
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: string }).error, 'missing_api_key');
    // Like /usage it is about the account: an access token (a browser's) does not read it.
    const { token } = (await (await server.post('/access-token', { grants: { tts: true } }, limited.auth)).json()) as { token: string };
    const byToken = await fetch(server.url + '/concurrency', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(byToken.status, 403);
    assert.equal(((await byToken.json()) as { error: string }).error, 'access_token_not_allowed');

    const sockets = [await TestSocket.open(server.url, limited.auth), await TestSocket.open(server.url, limited.auth), await TestSocket.open(server.url, unlimited.auth)];
    // A context that expects more text stays open: it holds a concurrency slot.
    sockets[0].send(open('a'));
    await sockets[0].waitFor((e) => e.type === 'chunk' && e.context_id === 'a');
    sockets[2].send(open('b'));
    await sockets[2].waitFor((e) => e.type === 'chunk' && e.context_id === 'b');

    const busy = await countsWhen(() => concurrency(server.url, limited.auth), (c) => c.tts_requests.active === 1 && c.tts_websockets.active === 2);
    assert.deepEqual(busy, { tts_requests: { active: 1, limit: 3 }, tts_websockets: { active: 2, limit: null } });
    const other = await countsWhen(() => concurrency(server.url, unlimited.auth), (c) => c.tts_requests.active === 1);
    assert.deepEqual(other, { tts_requests: { active: 1, limit: null }, tts_websockets: { active: 1, limit: null } });

    sockets[0].send({ ...open('a'), transcript: 'goodbye.', continue: false });
    await sockets[0].waitFor((e) => e.type === 'done' && e.context_id === 'a');
    for (const socket of sockets) socket.ws.close();
    assert.deepEqual(await countsWhen(() => concurrency(server.url, limited.auth), (c) => c.tts_requests.active === 0 && c.tts_websockets.active === 0), idle);
    assert.deepEqual((await countsWhen(() => concurrency(server.url, unlimited.auth), (c) => c.tts_requests.active === 0)).tts_requests, { active: 0, limit: null });
  } finally {
    await server.close();
  }
});

test('without accounts it reports for org_local, without a key', { timeout: 30_000 }, async () => {
  const server = await startServer();
  try {
    assert.deepEqual(await concurrency(server.url), { tts_requests: { active: 0, limit: null }, tts_websockets: { active: 0, limit: null } });
    const socket = await TestSocket.open(server.url);
    socket.send(open('x'));
    await socket.waitFor((e) => e.type === 'chunk');
    assert.deepEqual(await countsWhen(() => concurrency(server.url), (c) => c.tts_requests.active === 1), { tts_requests: { active: 1, limit: null }, tts_websockets: { active: 1, limit: null } });
    socket.ws.close();
    assert.deepEqual(await countsWhen(() => concurrency(server.url), (c) => c.tts_websockets.active === 0 && c.tts_requests.active === 0), {
      tts_requests: { active: 0, limit: null },
      tts_websockets: { active: 0, limit: null },
    });
  } finally {
    await server.close();
  }
});

test('a limit counter that fails is 503 limits_unavailable', { timeout: 30_000 }, async () => {
  const real = new InProcessLimits();
  let broken = false;
  const limits: LimitCounters = {
    acquire: (orgId, max) => real.acquire(orgId, max),
    consume: (keyId, requests, per) => real.consume(keyId, requests, per),
    active: async (orgId) => {
      if (broken) throw new Error('connection refused');
      return real.active(orgId);
    },
    close: () => real.close(),
  };
  const server = await startServer({ config: { accounts: { enabled: true } }, limits });
  try {
    const org = await newOrg(server, { maxConcurrent: 2 });
    assert.equal((await concurrency(server.url, org.auth)).tts_requests.limit, 2);
    broken = true;
    const response = await fetch(server.url + '/concurrency', { headers: org.auth });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '1');
    assert.equal(((await response.json()) as { error: string }).error, 'limits_unavailable');
  } finally {
    await server.close();
  }
});
