/**
 * @module test/audio-cache.gateways
 * The audio cache's shared tier across two real gateway processes, each with
 * its own data directory (so only the shared tier can answer one's request
 * from the other's synthesis):
 * - on the test Redis under a key prefix of their own, with accounts on one
 *   PostgreSQL schema, a prompt made on one gateway is `x-cache: hit` on the
 *   other, byte-identical, on `/tts/bytes` and `/tts/sse`, while another
 *   organisation misses; the metrics say the shared tier answered; a purge
 *   on one gateway removes the entry from Redis and from the other's memory;
 * - accounts off, on a redis-server of the test's own that is then killed,
 *   requests still succeed, as misses, without waiting for Redis, and the
 *   gateway logs the outage; once a new one listens on the port, entries
 *   are shared again.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { ConfigInput } from '../src/config/schema.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startRedis, stopRedis } from './helpers/private-servers.js';
import { closedPort, deleteKeys, eventually, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

const ADMIN_TOKEN = 'cache-gateways-admin-token-0123456789';

/** Accounts off (every request is the one implicit organisation's), or on a PostgreSQL schema both gateways share. */
function config(redisUrl: string, keyPrefix: string, schema: string | null = null): Partial<ConfigInput> {
  return {
    ...TONE_MODELS,
    redis: { url: redisUrl, keyPrefix, timeoutMs: 300 },
    ...(schema
      ? {
          store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 2 },
          accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0 },
        }
      : { accounts: { enabled: false } }),
    metrics: { enabled: true, public: true },
  };
}

const body = (transcript: string, container = 'wav') => ({
  model_id: 'gepard-1.0',
  transcript,
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container, encoding: 'pcm_s16le', sample_rate: 8000 },
});

async function post(gateway: Gateway, path: string, payload: unknown, auth: Record<string, string> = {}): Promise<{ status: number; cache: string | null; body: Buffer; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(15_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, cache: res.headers.get('x-cache'), body: bytes, ms: performance.now() - started };
}

type Event = { type: string; data?: string };
const events = (raw: Buffer): Event[] =>
  raw
    .toString()
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)) as Event);
/** The audio of a response: the body itself, or the SSE chunks' audio (the events carry request ids of their own). */
const audioOf = (path: string, raw: Buffer) =>
  path === '/tts/sse' ? Buffer.concat(events(raw).flatMap((e) => (e.type === 'chunk' && e.data ? [Buffer.from(e.data, 'base64')] : []))) : raw;
const eventTypes = (raw: Buffer) => events(raw).map((e) => e.type);

async function metric(gateway: Gateway, line: string): Promise<number | null> {
  const text = await (await fetch(`${gateway.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
}

const fresh = () => `Thank you for holding, your call matters to us ${randomUUID().replace(/[0-9-]/g, '')}.`;

describe('two gateways on the shared Redis and one PostgreSQL schema', () => {
  const prefix = testPrefix();
  const schema = freshSchemaName();
  let gateways: Gateway[] = [];

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await deleteKeys(prefix);
    await dropSchema(schema);
  });

  test('a prompt made on one is a byte-identical hit on the other, on every path; a purge reaches Redis', async () => {
    gateways = [await startGateway(config(TEST_REDIS_URL, prefix, schema))];
    gateways.push(await startGateway(config(TEST_REDIS_URL, prefix, schema)));
    const [a, b] = gateways;
    const { auth } = await adminOrg(a, ADMIN_TOKEN, { credits: 1_000_000 });
    const other = await adminOrg(a, ADMIN_TOKEN, { credits: 1_000_000 });
    for (const [path, container] of [
      ['/tts/bytes', 'wav'],
      ['/tts/sse', 'raw'],
    ]) {
      const transcript = fresh();
      const miss = await post(a, path, body(transcript, container), auth);
      assert.equal(miss.status, 200, miss.body.toString().slice(0, 300));
      assert.equal(miss.cache, 'miss', path);
      const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        // The write is in the background: wait (bounded) until it is in Redis.
        assert.ok(await eventually(async () => (await redis.keys(`${prefix}cache:audio/*`)).length > 0, 5000), 'the entry reaches Redis');
      } finally {
        redis.disconnect();
      }
      const hit = await post(b, path, body(transcript, container), auth);
      assert.equal(hit.status, 200);
      assert.equal(hit.cache, 'hit', `${path} on the other gateway`);
      assert.ok(audioOf(path, miss.body).length > 1000, `${path}: audio`);
      assert.ok(audioOf(path, hit.body).equals(audioOf(path, miss.body)), `${path}: byte-identical audio`);
      assert.deepEqual(eventTypes(hit.body), eventTypes(miss.body), `${path}: the same events`);
      // Isolation holds across gateways: the entry is the first organisation's alone.
      assert.equal((await post(b, path, body(transcript, container), other.auth)).cache, 'miss', `${path}: another organisation misses`);
      // Purged on the first gateway: from Redis as well.
      const purge = await fetch(`${a.url}/admin/cache/purge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ all: true }),
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(purge.status, 200);
      assert.ok(((await purge.json()) as { purged: number }).purged >= 1);
      const check = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        assert.deepEqual(await check.keys(`${prefix}cache:*`), []);
      } finally {
        check.disconnect();
      }
      // ...and from the other gateway's memory, which heard of the purge on the change bus.
      assert.ok(await eventually(async () => (await metric(b, 'voicegate_cache_entries{tier="memory"}')) === 0, 5000), `${path}: the other gateway purged its own tier`);
    }
    assert.equal(await metric(b, 'voicegate_cache_tier_hits_total{tier="shared"}'), 2);
    assert.equal(await metric(b, 'voicegate_cache_hits_total'), 2);
    assert.ok(((await metric(b, 'voicegate_cache_shared_bytes_total{direction="read"}')) ?? 0) > 0);
    assert.ok(((await metric(a, 'voicegate_cache_shared_writes_total')) ?? 0) >= 2);
  });
});

describe('two gateways while their Redis is away', () => {
  let redis: ChildProcess | null = null;
  let gateways: Gateway[] = [];

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    if (redis) await stopRedis(redis);
  });

  test('requests succeed as misses, at once; sharing resumes when Redis is back', async () => {
    const port = await closedPort();
    redis = await startRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    gateways = await Promise.all([startGateway(config(url, 'outage:')), startGateway(config(url, 'outage:'))]);
    const [a, b] = gateways;
    await stopRedis(redis);
    redis = null;
    for (let i = 0; i < 5; i++) {
      const transcript = fresh();
      const first = await post(a, '/tts/bytes', body(transcript));
      const second = await post(b, '/tts/bytes', body(transcript));
      assert.deepEqual([first.status, second.status], [200, 200]);
      assert.deepEqual([first.cache, second.cache], ['miss', 'miss']);
      assert.ok(second.body.equals(first.body), 'the same audio, made twice');
      assert.ok(second.ms < 2000, `a miss took ${second.ms.toFixed(0)} ms`);
    }
    assert.ok(((await metric(b, 'voicegate_cache_shared_unavailable_total')) ?? 0) >= 5);
    assert.ok(
      await eventually(() => b.warnings.some((w) => w.redis === 'cache'), 5000),
      `the outage is logged: ${JSON.stringify(b.warnings)}`,
    );
    // Back, empty: ioredis reconnects by itself (backing off to one attempt every 2 s).
    redis = await startRedis(port);
    const transcript = fresh();
    assert.ok(
      await eventually(
        async () => {
          const made = await post(a, '/tts/bytes', body(fresh()));
          return made.status === 200 && ((await metric(a, 'voicegate_cache_shared_writes_total')) ?? 0) > 0;
        },
        15_000,
        250,
      ),
      'the first gateway writes to Redis again',
    );
    const written = (await metric(a, 'voicegate_cache_shared_writes_total')) ?? 0;
    assert.equal((await post(a, '/tts/bytes', body(transcript))).cache, 'miss');
    assert.ok(await eventually(async () => ((await metric(a, 'voicegate_cache_shared_writes_total')) ?? 0) > written, 5000, 50), 'the entry reaches Redis');
    assert.equal((await post(b, '/tts/bytes', body(transcript))).cache, 'hit', 'the second gateway hits the first one’s entry again');
  });
});
