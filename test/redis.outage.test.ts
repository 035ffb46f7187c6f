/**
 * @module test/redis.outage
 * Redis going away and coming back, against a redis-server this test starts
 * on a free port: requests get `limits_unavailable` quickly (also from a
 * server that accepts connections but never answers), service resumes by
 * itself, a lease held through a Redis restart is counted again, the change
 * bus re-subscribes and says that notices may have been missed, and
 * malformed notices on its channel are ignored.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisChangeBus } from '../src/cluster/redis.js';
import type { AccountsChange } from '../src/cluster/change-bus.js';
import { ApiError } from '../src/errors/api-error.js';
import { RedisLimits } from '../src/limits/redis.js';
import { startRedis as startPrivateRedis, stopRedis } from './helpers/private-servers.js';
import { closedPort, deleteKeys, eventually, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

async function startRedis(port: number): Promise<ChildProcess> {
  const child = await startPrivateRedis(port);
  started.push(child);
  return child;
}

const started: ChildProcess[] = [];
after(async () => {
  for (const child of started) await stopRedis(child);
});

function isUnavailable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'limits_unavailable' && err.headers['retry-after'] === '1';
}

test('a server that accepts connections but never answers → limits_unavailable within the timeout', { timeout: 20_000 }, async () => {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as { port: number };
  const limits = new RedisLimits({ url: `redis://127.0.0.1:${port}`, keyPrefix: testPrefix(), leaseTtlMs: 15_000, timeoutMs: 300 });
  try {
    for (const call of [() => limits.acquire('org_x', 1), () => limits.consume('key_x', 1, 1), () => limits.active('org_x')]) {
      const begun = performance.now();
      await assert.rejects(call(), isUnavailable);
      assert.ok(performance.now() - begun < 1500, `answered in ${Math.round(performance.now() - begun)} ms`);
    }
  } finally {
    await limits.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('when Redis comes back, counters and the change bus work again by themselves; a held lease is counted again', { timeout: 30_000 }, async () => {
  const port = await closedPort();
  const url = `redis://127.0.0.1:${port}`;
  const keyPrefix = testPrefix();
  const limits = new RedisLimits({ url, keyPrefix, leaseTtlMs: 1500, timeoutMs: 500 });
  const listener = new RedisChangeBus({ url, keyPrefix, timeoutMs: 500 });
  const publisher = new RedisChangeBus({ url, keyPrefix, timeoutMs: 500 });
  const heard: AccountsChange[] = [];
  listener.subscribe((change) => heard.push(change));
  let missed = 0;
  listener.onMissed(() => missed++);
  let redis: ChildProcess | null = null;
  try {
    await assert.rejects(limits.acquire('org_a', 1), isUnavailable);
    const local: AccountsChange[] = [];
    publisher.subscribe((change) => local.push(change));
    const begun = performance.now();
    await assert.rejects(publisher.publish({ orgId: 'org_a' }));
    assert.ok(performance.now() - begun < 1500, 'publishing fails quickly too');
    assert.deepEqual(local, [{ orgId: 'org_a' }], 'this process still heard its own change');

    redis = await startRedis(port);
    let lease = null;
    assert.ok(
      await eventually(async () => {
        try {
          lease = await limits.acquire('org_a', 1);
          return true;
        } catch (err) {
          assert.ok(isUnavailable(err), String(err));
          return false;
        }
      }, 10_000, 100),
      'the counters recovered',
    );
    assert.ok(lease, 'a slot was free');
    assert.equal(await limits.active('org_a'), 1);

    await listener.ready();
    assert.ok(await eventually(() => missed === 1, 5000), 'subscribing after an outage reports that changes may have been missed');
    assert.ok(
      await eventually(async () => {
        await publisher.publish({ keyId: 'key_b' }).catch(() => {});
        return heard.some((c) => c.keyId === 'key_b');
      }, 10_000, 100),
      'the change bus recovered',
    );

    // Redis restarts empty while the lease is held: renewal counts the running request again.
    await stopRedis(redis);
    redis = await startRedis(port);
    assert.ok(
      await eventually(async () => (await limits.active('org_a').catch(() => -1)) === 1, 10_000, 100),
      'the held lease is counted again after the restart',
    );
    const restarted = heard.length;
    assert.ok(
      await eventually(async () => {
        await publisher.publish({ orgId: 'org_c' }).catch(() => {});
        return heard.slice(restarted).some((c) => c.orgId === 'org_c');
      }, 10_000, 100),
      'the bus re-subscribed after the restart',
    );
    assert.equal(missed, 2, 'and so does subscribing again after the restart');
    await (lease as { release(): Promise<void> } | null)?.release();
    assert.equal(await limits.active('org_a'), 0);
  } finally {
    await Promise.all([limits.close(), listener.close(), publisher.close()]);
    if (redis) await stopRedis(redis);
  }
});

test('malformed notices on the change channel are ignored', { timeout: 20_000 }, async () => {
  const keyPrefix = testPrefix();
  const bus = new RedisChangeBus({ url: TEST_REDIS_URL, keyPrefix, timeoutMs: 1000 });
  const raw = new Redis(TEST_REDIS_URL);
  const heard: AccountsChange[] = [];
  bus.subscribe((change) => heard.push(change));
  try {
    await bus.ready();
    for (const junk of ['not json', '{}', '{"origin":"x","change":{"orgId":42}}', JSON.stringify({ origin: 'x', change: { keyId: 'k'.repeat(500) } })]) {
      await raw.publish(bus.channel, junk);
    }
    await raw.publish(bus.channel, JSON.stringify({ origin: 'elsewhere', change: { orgId: 'org_ok' } }));
    assert.ok(await eventually(() => heard.length > 0, 1000, 5));
    assert.deepEqual(heard, [{ orgId: 'org_ok' }]);
  } finally {
    raw.disconnect();
    await bus.close();
    await deleteKeys(keyPrefix);
  }
});
