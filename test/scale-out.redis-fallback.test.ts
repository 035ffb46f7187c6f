/**
 * @module test/scale-out.redis-fallback
 * Two gateway processes on one PostgreSQL schema and a redis-server of the
 * test's own, with the default `limits.whenSharedCountersFail: local`, under
 * a steady mixed load (bytes, SSE, OpenAI, WebSocket turns, random aborts)
 * while Redis is killed and started again, empty:
 * - while it is away, at least 99 % of the requests whose clients wait for
 *   them succeed, and a capped organisation never holds more than its limit
 *   plus one per gateway; `/readyz` stays 200 with `limits: degraded`, the
 *   metric says so, and each gateway logs it once;
 * - a key revoked meanwhile is refused by the other gateway within the
 *   500 ms its caches live, and stays refused once Redis is back;
 * - when Redis is back the limits are shared again within seconds, the
 *   WebSocket contexts left open are counted, no lease is left behind, and
 *   the books are exact (balance = initial − Σ charges, each charge once).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Store } from '../src/store/store.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { auditBooks, mixedLoad, RAW, type Outcome } from './helpers/mixed-load.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startRedis, stopRedis } from './helpers/private-servers.js';
import { closedPort, eventually } from './helpers/redis.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN_TOKEN = 'scale-out-admin-token-0123456789';
const KEY_PREFIX = 'fallback:';
const LEASE_TTL_MS = 3000;
const RESERVATION_TTL_MS = 4000;
/** How long a gateway reuses a key record it read (accounts/gate.ts CACHE_MS): the stated revocation bound. */
const REVOCATION_BOUND_MS = 500;
const schema = freshSchemaName();
let redis: ChildProcess | null = null;
let redisPort = 0;
let gateways: Gateway[] = [];
let store: Store;

before(async () => {
  redisPort = await closedPort();
  redis = await startRedis(redisPort);
  const config = {
    ...TONE_MODELS,
    store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
    redis: { url: `redis://127.0.0.1:${redisPort}`, keyPrefix: KEY_PREFIX, leaseTtlMs: LEASE_TTL_MS, timeoutMs: 300 },
    accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0, reservationTtlMs: RESERVATION_TTL_MS },
    metrics: { enabled: true },
  };
  gateways = await Promise.all([startGateway(config), startGateway(config)]);
  store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 2, timeoutMs: 5000 });
});

after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await store?.close();
  if (redis) await stopRedis(redis);
  await dropSchema(schema);
});

async function json<T>(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: (await response.json()) as T };
}

const limitsState = async (g: Gateway) => (await json<{ limits?: string }>(`${g.url}/readyz`)).body.limits;
const allIn = async (state: string) => (await Promise.all(gateways.map(limitsState))).every((s) => s === state);
/** `tts_requests.active` of the caller's organisation on one gateway: Redis's count while shared, the gateway's own while degraded. */
const active = async (g: Gateway, auth: Record<string, string>) => (await json<{ tts_requests: { active: number } }>(`${g.url}/concurrency`, auth)).body.tts_requests.active;
const usageStatus = async (g: Gateway, auth: Record<string, string>) => {
  const response = await fetch(`${g.url}/usage`, { headers: auth, signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  return response.status;
};

async function metric(g: Gateway, name: string): Promise<number> {
  const response = await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(5000) });
  const line = (await response.text()).split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** Live leases of an organisation in Redis. */
async function leasesInRedis(orgId: string): Promise<number> {
  const client = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    return await client.zcount(`${KEY_PREFIX}limits:leases:${orgId}`, Date.now(), '+inf');
  } finally {
    client.disconnect();
  }
}

/** A WebSocket context that stays open (its turn holds a concurrency slot) until `end`; null when refused. */
async function openContext(g: Gateway, auth: Record<string, string>, id: string): Promise<{ socket: TestSocket; refused: string | null }> {
  const socket = await TestSocket.open(g.url, auth);
  socket.send({ model_id: 'omnivoice', voice: { mode: 'id', id: 'sarah' }, output_format: { ...RAW, sample_rate: 8000 }, context_id: id, transcript: 'Held open. ', continue: true });
  const first = await socket.waitFor((e) => e.type === 'chunk' || e.type === 'error', 10_000);
  return { socket, refused: first.type === 'error' ? String(first.error_code) : null };
}

test('Redis killed and started again under mixed load: served on local counters, limits near the cap, shared again after, exact books', { timeout: 120_000 }, async () => {
  const INITIAL = 10_000_000;
  const CAP = 4;
  const [steady, capped, held, revoked] = await Promise.all([
    // Limits it never reaches, so every request needs the counters (rate and concurrency) and none is refused.
    adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL, maxConcurrent: 100, rateLimit: { requests: 100_000, per_seconds: 60 } }),
    adminOrg(gateways[1], ADMIN_TOKEN, { credits: INITIAL, maxConcurrent: CAP }),
    adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL, maxConcurrent: 2 }),
    adminOrg(gateways[1], ADMIN_TOKEN, { credits: 1000 }),
  ]);
  const load: { org: 'steady' | 'capped'; outcome: Outcome }[] = [];
  let running = true;
  const worker = (org: 'steady' | 'capped', auth: Record<string, string>, w: number) =>
    (async () => {
      for (let i = 0; running; i++) {
        const [outcome] = await mixedLoad({ urls: [gateways[(w + i) % 2].url], auth, count: 1, seed: w * 100_003 + i, sampleRate: 8000 });
        load.push({ org, outcome });
      }
    })();
  const workers = [...Array.from({ length: 4 }, (_, w) => worker('steady', steady.auth, w)), ...Array.from({ length: 8 }, (_, w) => worker('capped', capped.auth, w + 10))];
  const finishedOn = (url: string) => load.filter((l) => l.org === 'steady' && l.outcome.url === url && l.outcome.finished).length;
  const servedMore = async (n: number) => {
    const before = gateways.map((g) => finishedOn(g.url));
    return eventually(() => gateways.every((g, i) => finishedOn(g.url) >= before[i] + n), 20_000);
  };
  let peak = 0;
  const figures: Record<string, number> = {};
  try {
    assert.ok(await eventually(() => allIn('shared'), 10_000), 'both gateways use Redis');
    const gatewaysSeen = async () => (await Promise.all(gateways.map((g) => metric(g, 'voicegate_limits_gateways')))).every((n) => n === 2);
    assert.ok(await eventually(gatewaysSeen, 5000, 50), 'each gateway has heard the other’s heartbeat');
    assert.equal(await usageStatus(gateways[1], revoked.auth), 200, 'gateway 1 has read (and cached) the key');
    assert.ok(await servedMore(5), 'served before the outage');

    await stopRedis(redis!);
    redis = null;
    const down = performance.now();
    assert.ok(await eventually(() => allIn('degraded'), 10_000, 50), '/readyz says limits: degraded on both');
    figures.degradedAfterMs = Math.round(performance.now() - down);
    for (const g of gateways) {
      const ready = await fetch(`${g.url}/readyz`);
      assert.equal(ready.status, 200);
      await ready.arrayBuffer();
      assert.equal(await metric(g, 'voicegate_limits_degraded'), 1);
      assert.equal(await metric(g, 'voicegate_limits_gateways'), 2, 'both gateways were alive when Redis last answered');
    }

    // A key revoked while Redis is away: the admin API works (PostgreSQL is up), the notice cannot be sent.
    const revokedAt = performance.now();
    const revocation = await fetch(`${gateways[0].url}/admin/keys/key_${/^sk_([^_]+)_/.exec(revoked.key)?.[1] ?? ''}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(revocation.status, 200, await revocation.text());
    assert.ok(await eventually(async () => (await usageStatus(gateways[1], revoked.auth)) === 401, 3000, 20), 'gateway 1 refuses the revoked key');
    figures.revokedRefusedAfterMs = Math.round(performance.now() - revokedAt);
    assert.ok(figures.revokedRefusedAfterMs <= REVOCATION_BOUND_MS + 400, `refused ${figures.revokedRefusedAfterMs} ms after the revocation`);

    // Open contexts hold slots: one per gateway is each one's share of 2; a third is refused.
    const contexts = [await openContext(gateways[0], held.auth, 'held-0'), await openContext(gateways[1], held.auth, 'held-1')];
    assert.deepEqual(contexts.map((c) => c.refused), [null, null], 'each gateway takes its share');
    const third = await openContext(gateways[0], held.auth, 'held-2');
    assert.equal(third.refused, 'overloaded', "beyond gateway 0's share");
    third.socket.close();

    // The capped organisation's concurrency across both gateways (each counts its own while degraded).
    const until = performance.now() + 4000;
    while (performance.now() < until) {
      const [a, b] = await Promise.all(gateways.map((g) => active(g, capped.auth)));
      peak = Math.max(peak, a + b);
    }
    assert.ok(await servedMore(5), 'both gateways serve throughout the outage');

    redis = await startRedis(redisPort);
    const up = performance.now();
    assert.ok(await eventually(() => allIn('shared'), 15_000, 50), 'both gateways use Redis again');
    figures.sharedAgainAfterMs = Math.round(performance.now() - up);
    assert.equal(await usageStatus(gateways[1], revoked.auth), 401, 'the revoked key stays refused after Redis is back');
    assert.ok((await leasesInRedis(held.orgId)) >= 2, 'the open contexts’ leases were written back');
    assert.equal(await active(gateways[1], held.auth), 2, 'and are counted, fleet-wide, on either gateway');
    const fourth = await openContext(gateways[1], held.auth, 'held-3');
    assert.equal(fourth.refused, 'overloaded', 'the shared limit counts them');
    fourth.socket.close();
    for (const c of contexts) c.socket.close();
    assert.ok(await eventually(async () => (await active(gateways[0], held.auth)) === 0, 5000, 50), 'their slots free once they close');
    const again = await openContext(gateways[1], held.auth, 'held-4');
    assert.equal(again.refused, null, 'and can be taken');
    again.socket.close();
    assert.ok(await servedMore(5), 'served after the outage');
  } finally {
    running = false;
    await Promise.all(workers);
  }

  // Nothing left held: no lease in Redis, no reservation in PostgreSQL.
  for (const org of [steady, capped, held]) {
    assert.ok(await eventually(async () => (await leasesInRedis(org.orgId)) === 0, 5000, 50), `no lease left for ${org.orgId}`);
    assert.ok(await eventually(async () => (await store.ledger.reserved(org.orgId)) === 0, RESERVATION_TTL_MS + 5000, 50), `no reservation left for ${org.orgId}`);
  }
  await auditBooks(store, steady.orgId, INITIAL, load.filter((l) => l.org === 'steady').map((l) => l.outcome));
  await auditBooks(store, capped.orgId, INITIAL, load.filter((l) => l.org === 'capped').map((l) => l.outcome));

  const waited = load.filter((l) => l.org === 'steady' && l.outcome.leave === 'never');
  const succeeded = waited.filter((l) => l.outcome.finished).length;
  figures.steadyRequests = waited.length;
  figures.successPercent = Math.round((10_000 * succeeded) / waited.length) / 100;
  figures.cappedPeak = peak;
  const cappedOutcomes = load.filter((l) => l.org === 'capped').map((l) => l.outcome);
  figures.cappedRequests = cappedOutcomes.length;
  figures.cappedRefused = cappedOutcomes.filter((o) => o.errorCode === 'overloaded').length;
  console.log(`redis fallback figures: ${JSON.stringify(figures)}`);
  assert.ok(succeeded >= 0.99 * waited.length, `${succeeded} of ${waited.length} succeeded: ${JSON.stringify(waited.filter((l) => !l.outcome.finished).map((l) => [l.outcome.kind, l.outcome.status, l.outcome.errorCode]))}`);
  const unexpected = load.filter((l) => l.outcome.errorCode && l.outcome.errorCode !== 'overloaded');
  assert.deepEqual(unexpected.map((l) => `${l.org} ${l.outcome.kind} ${l.outcome.status} ${l.outcome.errorCode}`), [], 'no request failed for want of Redis');
  assert.ok(peak >= 1, 'the sampler saw the capped organisation’s streams');
  assert.ok(peak <= CAP + gateways.length, `the capped organisation held at most its limit plus one per gateway; saw ${peak}`);
  assert.ok(figures.cappedRefused > 0, 'its cap refused some requests meanwhile');
  for (const g of gateways) {
    const lines = (msg: string) => g.warnings.filter((w) => String(w.msg).startsWith(msg)).length;
    assert.equal(lines('shared limit counters unavailable'), 1, 'one line per outage, not one per request');
    assert.equal(lines('accounts dependency failed'), 0, 'no request failed on the counters');
    assert.equal(await metric(g, 'voicegate_limits_fallbacks_total'), 1);
    assert.equal(await metric(g, 'voicegate_limits_degraded'), 0);
  }
});
