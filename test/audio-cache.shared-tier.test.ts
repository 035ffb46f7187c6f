/**
 * @module test/audio-cache.shared-tier
 * The shared tier (Redis) on its own, against the test Redis under a key
 * prefix of its own: an entry written is read back whole, under a key that
 * carries its id, with a TTL; one over the size limit is not sent; a corrupt
 * or truncated value is a miss and is removed; a purge by organisation, voice
 * or everything removes exactly those; with Redis unreachable every call is a
 * miss at once, and a purge rejects; with a Redis that stops answering, one
 * lookup waits out the timeout and the next ones are misses at once. Through `AudioCache`, a third tier: a
 * second cache with empty memory and disk finds the first one's entry there.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { AudioCache, entryId } from '../src/cache/audio-cache.js';
import { encodeEntry, makeEntry } from '../src/cache/entry.js';
import { SharedTier } from '../src/cache/shared-tier.js';
import { startRedis, stopRedis } from './helpers/private-servers.js';
import { closedPort, deleteKeys, eventually, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

const prefix = testPrefix();
const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
const tiers: SharedTier[] = [];

function tier(overrides: Partial<ConstructorParameters<typeof SharedTier>[0]> = {}): SharedTier {
  const made = new SharedTier({ url: TEST_REDIS_URL, keyPrefix: prefix, timeoutMs: 500, maxEntryBytes: 64 * 1024, ttlSeconds: 3600, ...overrides });
  tiers.push(made);
  return made;
}

const entry = (fill: number, bytes = 1000) =>
  makeEntry([
    { audio: Buffer.alloc(bytes, fill), seconds: 0.5, words: [{ word: 'hello', start: 0, end: 0.25 }] },
    { audio: Buffer.alloc(10, fill + 1), seconds: 0.01 },
  ]);
const flightPieces = (made: ReturnType<typeof makeEntry>) => made.pieces.map((p) => ({ ...p, stepTime: 0 }));
const key = (n: number) => n.toString(16).padStart(64, '0');

after(async () => {
  await Promise.all(tiers.map((t) => t.close()));
  await deleteKeys(prefix);
  redis.disconnect();
});

test('an entry written is read back whole, under <prefix>cache:<id>, with a TTL', async () => {
  const shared = tier();
  await shared.open();
  const id = entryId('org-a', 'sarah', key(1));
  const written = entry(7);
  await shared.put(id, written);
  const raw = await redis.getBuffer(`${prefix}cache:${id}`);
  assert.ok(raw, 'the key carries the entry id');
  assert.deepEqual(raw, encodeEntry(written));
  const ttl = await redis.ttl(`${prefix}cache:${id}`);
  assert.ok(ttl > 3500 && ttl <= 3600, `TTL ${ttl}`);
  const other = tier();
  await other.open();
  const read = await other.get(id);
  assert.deepEqual(read?.pieces, written.pieces);
  assert.equal(await shared.get(entryId('org-a', 'sarah', key(2))), null);
  assert.equal(shared.stats.writes, 1);
  assert.ok(shared.stats.bytesWritten > 1000);
});

test('an entry over the size limit is not sent', async () => {
  const shared = tier({ maxEntryBytes: 2048 });
  await shared.open();
  const id = entryId('org-a', 'sarah', key(3));
  await shared.put(id, entry(1, 4096));
  assert.equal(await redis.exists(`${prefix}cache:${id}`), 0);
});

test('a corrupt or truncated value is a miss, and is removed', async () => {
  const shared = tier();
  await shared.open();
  for (const [n, spoil] of [
    [4, (blob: Buffer) => Buffer.concat([blob.subarray(0, 200), Buffer.from([blob[200] ^ 1]), blob.subarray(201)])],
    [5, (blob: Buffer) => blob.subarray(0, blob.length - 3)],
  ] as const) {
    const id = entryId('org-a', 'sarah', key(n));
    await redis.set(`${prefix}cache:${id}`, spoil(encodeEntry(entry(n))));
    assert.equal(await shared.get(id), null, `spoiled entry ${n} is a miss`);
    await shared.settled();
    assert.equal(await redis.exists(`${prefix}cache:${id}`), 0, `spoiled entry ${n} is removed`);
  }
  assert.equal(shared.stats.corrupt, 2);
});

test('a purge by organisation, voice, both or everything removes exactly those', async () => {
  const purgePrefix = testPrefix();
  const make = () => {
    const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null, shared: tier({ keyPrefix: purgePrefix }) });
    return cache;
  };
  const cache = make();
  await cache.open();
  const ids = [entryId('org-a', 'sarah', key(10)), entryId('org-a', 'emma', key(11)), entryId('org-b', 'sarah', key(12)), entryId('org-b', 'emma', key(13))];
  const fill = async () => {
    for (const [i, id] of ids.entries()) cache.keep(id, flightPieces(entry(i)));
    await cache.settled();
  };
  const left = async () => (await redis.keys(`${purgePrefix}cache:*`)).map((k) => k.slice(`${purgePrefix}cache:`.length)).sort();
  try {
    await fill();
    assert.deepEqual(await left(), [...ids].sort());
    assert.equal(await cache.purge({ orgId: 'org-a', voiceId: 'sarah' }), 1);
    assert.deepEqual(await left(), ids.slice(1).sort());
    assert.equal(await cache.purge({ voiceId: 'emma' }), 2);
    assert.deepEqual(await left(), [ids[2]]);
    await fill();
    assert.equal(await cache.purge({ orgId: 'org-b' }), 2);
    assert.deepEqual(await left(), ids.slice(0, 2).sort());
    assert.equal(await cache.purge({}), 2);
    assert.deepEqual(await left(), []);
  } finally {
    await deleteKeys(purgePrefix);
  }
});

test('a cache with empty memory and disk finds another one’s entry in the shared tier, then holds it in memory', async () => {
  const first = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null, shared: tier() });
  const second = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null, shared: tier() });
  await Promise.all([first.open(), second.open()]);
  const id = entryId('org-c', 'sarah', key(20));
  const made = entry(9);
  first.keep(id, flightPieces(made));
  await first.settled();
  assert.deepEqual((await second.lookup(id))?.pieces, made.pieces);
  assert.deepEqual((await second.lookup(id))?.pieces, made.pieces);
  assert.deepEqual(second.stats().tierHits, { memory: 1, disk: 0, shared: 1 });
});

test('with Redis unreachable, lookups and writes are misses at once, and a purge rejects', async () => {
  const shared = tier({ url: `redis://127.0.0.1:${await closedPort()}`, timeoutMs: 200 });
  await shared.open();
  const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null, shared });
  const started = performance.now();
  for (let i = 0; i < 20; i++) assert.equal(await cache.lookup(entryId('org-a', 'sarah', key(30 + i))), null);
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 100, `20 lookups took ${elapsed.toFixed(1)} ms`);
  cache.keep(entryId('org-a', 'sarah', key(30)), flightPieces(entry(1)));
  await cache.settled();
  assert.equal(shared.stats.unavailable, 21);
  // This server's own tiers are purged; the shared one reports that it could not be reached.
  await assert.rejects(cache.purge({}));
  assert.equal(cache.memory.size, 0);
});

test('a Redis that accepts but does not answer costs one lookup the timeout, then the tier is skipped for a while', async () => {
  const port = await closedPort();
  const server = await startRedis(port);
  try {
    const shared = tier({ url: `redis://127.0.0.1:${port}`, timeoutMs: 200 });
    await shared.open();
    const id = entryId('org-a', 'sarah', key(40));
    await shared.put(id, entry(3));
    assert.ok(await shared.get(id), 'answered while Redis answers');
    server.kill('SIGSTOP');
    const first = performance.now();
    assert.equal(await shared.get(id), null);
    const waited = performance.now() - first;
    assert.ok(waited >= 150 && waited < 1000, `the first lookup waited ${waited.toFixed(0)} ms`);
    const next = performance.now();
    for (let i = 0; i < 10; i++) assert.equal(await shared.get(id), null);
    assert.ok(performance.now() - next < 50, 'the next lookups skip the tier');
    server.kill('SIGCONT');
    assert.ok(await eventually(async () => (await shared.get(id)) !== null, 5000), 'used again after the back-off once Redis answers');
  } finally {
    server.kill('SIGCONT');
    await stopRedis(server);
  }
});
