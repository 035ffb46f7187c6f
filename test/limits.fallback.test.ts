/**
 * @module test/limits.fallback
 * The shared counters' local fallback against a redis-server of the test's
 * own: two instances (two servers) that lose Redis fall back within one call,
 * divide an organisation's limits between them, log it once, and on recovery
 * write back the leases of requests still running, write the releases that
 * failed (Redis cut off behind a proxy, so it kept its data) and count
 * exactly what runs; after a restart that lost everything, the same.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import type { Lease } from '../src/limits/counters.js';
import { FallbackLimits } from '../src/limits/fallback.js';
import { RedisLimits } from '../src/limits/redis.js';
import { createLogger } from '../src/log/logger.js';
import { startRedis, stopRedis } from './helpers/private-servers.js';
import { closedPort, eventually, testPrefix } from './helpers/redis.js';

const started: ChildProcess[] = [];
after(async () => {
  for (const child of started) await stopRedis(child);
});

/** A logger whose lines are kept, parsed. */
function recordingLogger(): { logger: ReturnType<typeof createLogger>; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

async function pair(port: number, leaseTtlMs: number) {
  const keyPrefix = testPrefix();
  const url = `redis://127.0.0.1:${port}`;
  const logs = recordingLogger();
  const open = () =>
    new FallbackLimits(new RedisLimits({ url, keyPrefix, leaseTtlMs, timeoutMs: 300, logger: logs.logger }), {
      expectedGateways: null,
      aliveTtlMs: leaseTtlMs,
      heartbeatMs: 200,
      logger: logs.logger,
    });
  const a = open();
  const b = open();
  assert.ok(await eventually(() => a.status().gateways === 2 && b.status().gateways === 2, 5000), 'each sees two servers alive');
  return { a, b, keyPrefix, lines: logs.lines };
}

async function leasesInRedis(port: number, keyPrefix: string, orgId: string): Promise<number> {
  const redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    return await redis.zcount(`${keyPrefix}limits:leases:${orgId}`, Date.now(), '+inf');
  } finally {
    redis.disconnect();
  }
}

/** A TCP proxy to Redis that can be cut (every connection reset, new ones refused) and restored: a partition, Redis keeping its data. */
async function partitionable(target: number): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(target, '127.0.0.1');
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      sockets.add(from);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
      from.pipe(to);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const org = () => `org_${randomBytes(6).toString('hex')}`;

test('Redis cut off (it keeps its data): each server counts its share; on recovery open leases are written back and freed slots are free', { timeout: 30_000 }, async () => {
  const port = await closedPort();
  started.push(await startRedis(port));
  const proxy = await partitionable(port);
  const { a, b, keyPrefix, lines } = await pair(proxy.port, 10_000);
  const orgId = org();
  try {
    // Before the outage: three leases on A, one on B; the limit is four.
    const [a1, a2, a3, b1] = await Promise.all([a.acquire(orgId, 4), a.acquire(orgId, 4), a.acquire(orgId, 4), b.acquire(orgId, 4)]);
    assert.ok(a1 && a2 && a3 && b1);
    assert.equal(await a.acquire(orgId, 4), null, 'full while shared');

    proxy.cut();
    const begun = performance.now();
    // A holds three: more than its share of ⌈4 / 2⌉ = 2, so it admits nobody; B holds one and may take one more.
    assert.equal(await a.acquire(orgId, 4), null);
    assert.ok(performance.now() - begun < 1500, `fell back in ${Math.round(performance.now() - begun)} ms`);
    assert.equal(a.status().state, 'degraded');
    const bLocal = await b.acquire(orgId, 4);
    assert.ok(bLocal, 'B takes its share');
    assert.equal(await b.acquire(orgId, 4), null, "B's share is two");
    assert.equal(b.status().state, 'degraded');
    // Two of A's requests end during the outage; their releases cannot be written yet.
    await Promise.all([a1.release(), a2.release()]);
    const aLocal = await a.acquire(orgId, 4);
    assert.ok(aLocal, 'A is below its share again');
    assert.equal(await a.acquire(orgId, 4), null);
    assert.equal((await a.active(orgId)) + (await b.active(orgId)), 4, 'four running in all');
    for (let i = 0; i < 20; i++) await a.acquire(orgId, 4);
    assert.equal(lines.filter((l) => l.msg.startsWith('shared limit counters unavailable')).length, 2, 'one line per server, not per request');

    proxy.restore();
    assert.ok(await eventually(() => a.status().state === 'shared' && b.status().state === 'shared', 10_000, 50), 'both use Redis again');
    assert.equal(await leasesInRedis(port, keyPrefix, orgId), 4, 'a3, b1 and the two taken during the outage; not a1, a2');
    assert.equal(await a.active(orgId), 4);
    assert.equal(await b.acquire(orgId, 4), null, 'the limit is shared again, counting the written-back leases');
    await aLocal.release();
    const next = await b.acquire(orgId, 4);
    assert.ok(next, 'a slot freed after the outage is free on the other server');
    await Promise.all([a3.release(), b1.release(), bLocal.release(), next.release(), aLocal.release()]);
    assert.equal(await leasesInRedis(port, keyPrefix, orgId), 0, 'no lease leaked');
    assert.equal(lines.filter((l) => l.msg.startsWith('shared limit counters reachable again')).length, 2);
    assert.deepEqual([a.status().fallbacks, b.status().fallbacks], [1, 1]);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await proxy.close();
  }
});

test('Redis restarted empty: leases of requests still running are counted again, rate windows local meanwhile', { timeout: 30_000 }, async () => {
  const port = await closedPort();
  let redis = await startRedis(port);
  started.push(redis);
  const { a, b, keyPrefix } = await pair(port, 10_000);
  const orgId = org();
  const key = `key_${randomBytes(6).toString('hex')}`;
  const held: Lease[] = [];
  try {
    held.push((await a.acquire(orgId, 2))!);
    await stopRedis(redis);
    // Rate: each server allows its share of 4 per minute.
    for (let i = 0; i < 2; i++) assert.deepEqual(await a.consume(key, 4, 60), { allowed: true });
    assert.equal((await a.consume(key, 4, 60)).allowed, false, "A's share of the rate is two");
    assert.deepEqual(await b.consume(key, 4, 60), { allowed: true }, "B's share is its own");
    assert.equal(await a.acquire(orgId, 2), null, 'A holds its share of ⌈2 / 2⌉ = 1');
    held.push((await b.acquire(orgId, 2))!);
    assert.ok(held[1]);

    redis = await startRedis(port);
    started.push(redis);
    assert.ok(await eventually(() => a.status().state === 'shared' && b.status().state === 'shared', 10_000, 50), 'both use Redis again');
    assert.equal(await leasesInRedis(port, keyPrefix, orgId), 2, 'the lease taken before the restart and the one taken during the outage');
    assert.equal(await a.acquire(orgId, 2), null);
    assert.deepEqual(await a.consume(key, 4, 60), { allowed: true }, 'the local windows were dropped: Redis counts from its own');
    await Promise.all(held.map((l) => l.release()));
    assert.equal(await leasesInRedis(port, keyPrefix, orgId), 0, 'no lease leaked');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  // A server that closes leaves the set of live servers.
  const redisClient = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    assert.equal(await redisClient.zcard(`${keyPrefix}limits:gateways`), 0);
  } finally {
    redisClient.disconnect();
  }
});
