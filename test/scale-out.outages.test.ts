/**
 * @module test/scale-out.outages
 * Two gateway processes under steady load while their PostgreSQL (a private
 * cluster this test starts) is restarted and then their Redis (a private
 * redis-server) is stopped and started again, with
 * `limits.whenSharedCountersFail: refuse`. Requests in each window get a
 * documented error — 503 `store_unavailable` or `limits_unavailable` with
 * `Retry-After` — while `/readyz` stays 200 (`limits: unavailable`), nothing
 * is charged twice or lost (every clip served is one ledger row, every
 * refused request none), and service resumes without restarting the
 * gateways. (The default, counting locally while Redis is away, is
 * test/scale-out.redis-fallback.)
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { allRows, RAW } from './helpers/mixed-load.js';
import { canRunPrivatePostgres, startPostgres, startRedis, stopRedis, type PrivatePostgres } from './helpers/private-servers.js';
import { closedPort, eventually } from './helpers/redis.js';
import { ttsBody } from './helpers/server.js';

const ADMIN_TOKEN = 'scale-out-admin-token-0123456789';
/** A reservation whose release could not be written while PostgreSQL was down counts until it lapses. */
const RESERVATION_TTL_MS = 3000;
let postgres: PrivatePostgres | null = null;
let redis: ChildProcess | null = null;
let redisPort = 0;
let gateways: Gateway[] = [];

before(async () => {
  // This machine kind ships PostgreSQL 15; without its server binaries the test cannot prove anything.
  assert.ok(canRunPrivatePostgres(), 'the PostgreSQL server binaries (initdb, pg_ctl) are installed (VOICEGATE_TEST_PG_BIN points elsewhere)');
  postgres = await startPostgres();
  redisPort = await closedPort();
  redis = await startRedis(redisPort);
  const config = {
    ...TONE_MODELS,
    store: { databaseUrl: postgres.url, schema: 'voicegate', poolSize: 4, timeoutMs: 1000 },
    redis: { url: `redis://127.0.0.1:${redisPort}`, keyPrefix: 'outage:', leaseTtlMs: 2000, timeoutMs: 300 },
    limits: { whenSharedCountersFail: 'refuse' as const },
    accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0, reservationTtlMs: RESERVATION_TTL_MS },
    metrics: { enabled: false },
  };
  gateways = await Promise.all([startGateway(config), startGateway(config)]);
});

after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  if (redis) await stopRedis(redis);
  await postgres?.destroy();
});

interface Answer {
  status: number;
  requestId: string;
  code: string | null;
  retryAfter: string | null;
  /** A 200 whose body ended without an error event. */
  complete: boolean;
  at: number;
  url: string;
}

async function ask(url: string, auth: Record<string, string>, sse: boolean): Promise<Answer> {
  const body = ttsBody({ transcript: 'A short sentence to speak.', output_format: sse ? { ...RAW, sample_rate: 8000 } : { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 } });
  try {
    const response = await fetch(`${url}${sse ? '/tts/sse' : '/tts/bytes'}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    const text = Buffer.from(await response.arrayBuffer()).toString('latin1');
    const code = /"error_code":"([a-z_]+)"/.exec(text)?.[1] ?? null;
    return { status: response.status, requestId: String(response.headers.get('x-request-id')), code, retryAfter: response.headers.get('retry-after'), complete: response.status === 200 && !code, at: performance.now(), url };
  } catch {
    return { status: 0, requestId: '', code: null, retryAfter: null, complete: false, at: performance.now(), url };
  }
}

test('PostgreSQL restarted and Redis stopped and started under load: documented 503s, exact books, service resumes', { timeout: 90_000 }, async () => {
  const INITIAL = 100_000;
  // A concurrency limit, so every request also needs Redis.
  const org = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL, maxConcurrent: 50 });
  const answers: Answer[] = [];
  let running = true;
  const workers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; running; i++) answers.push(await ask(gateways[(w + i) % 2].url, org.auth, (w + i) % 3 === 0));
  });
  /** Every gateway has served a few clips or streams in full since `since`. */
  const servedSince = (since: number) => gateways.every((g) => answers.filter((a) => a.at > since && a.complete && a.url === g.url).length >= 3);
  const refusedSince = (since: number, code: string) => answers.some((a) => a.at > since && a.code === code);

  try {
    assert.ok(await eventually(() => servedSince(0), 10_000), 'served before the outages');

    const pgDown = performance.now();
    await postgres!.stop();
    assert.ok(await eventually(() => refusedSince(pgDown, 'store_unavailable'), 15_000), 'store_unavailable while PostgreSQL is down: ' + gateways.map((g) => `${g.process.exitCode ?? g.process.signalCode} ${g.stderr()}`).join(' | '));
    await postgres!.start();
    const pgUp = performance.now();
    assert.ok(await eventually(() => servedSince(pgUp), 20_000), 'both gateways serve again after PostgreSQL is back');

    const redisDown = performance.now();
    await stopRedis(redis!);
    assert.ok(await eventually(() => refusedSince(redisDown, 'limits_unavailable'), 15_000), 'limits_unavailable while Redis is down');
    for (const g of gateways) {
      const ready = await fetch(`${g.url}/readyz`);
      assert.equal(ready.status, 200, 'still ready: other organisations are served');
      assert.equal(((await ready.json()) as { limits: string }).limits, 'unavailable');
    }
    redis = await startRedis(redisPort);
    const redisUp = performance.now();
    assert.ok(await eventually(() => servedSince(redisUp), 20_000), 'both gateways serve again after Redis is back');
  } finally {
    running = false;
    await Promise.all(workers);
  }

  const failures = answers.filter((a) => a.status !== 200);
  for (const a of failures) {
    assert.equal(a.status, 503, `a documented error, not ${a.status} ${a.code}`);
    assert.ok(a.code === 'store_unavailable' || a.code === 'limits_unavailable', String(a.code));
    assert.equal(a.retryAfter, '1');
  }
  const store = await openPostgresStore({ url: postgres!.url, schema: 'voicegate', poolSize: 2, timeoutMs: 5000 });
  try {
    assert.ok(await eventually(async () => (await store.ledger.reserved(org.orgId)) === 0, RESERVATION_TTL_MS + 5000, 50), 'no reservation counts any more');
    const charges = (await allRows(store, org.orgId)).filter((r) => r.kind === 'charge');
    assert.equal((await store.orgs.get(org.orgId))!.balance, INITIAL + charges.reduce((sum, r) => sum + r.credits, 0), 'balance = initial − Σ charges');
    const byRequest = new Map<string, number>();
    for (const row of charges) byRequest.set(row.requestId!, (byRequest.get(row.requestId!) ?? 0) + 1);
    for (const [requestId, n] of byRequest) assert.equal(n, 1, `${requestId} charged once`);
    for (const a of answers.filter((x) => x.complete)) assert.equal(byRequest.get(a.requestId), 1, `served ${a.requestId} is in the ledger`);
    for (const a of failures) assert.equal(byRequest.get(a.requestId), undefined, `refused ${a.requestId} is not charged`);
    const counts = { served: answers.filter((a) => a.complete).length, store: failures.filter((a) => a.code === 'store_unavailable').length, limits: failures.filter((a) => a.code === 'limits_unavailable').length };
    assert.ok(counts.store > 0 && counts.limits > 0, JSON.stringify(counts));
  } finally {
    await store.close();
  }
});
