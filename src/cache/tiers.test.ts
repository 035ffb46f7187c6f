import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AudioCache, entryId } from './audio-cache.js';
import { FileBlobStorage } from './blob-storage.js';
import { decodeEntry, encodeEntry, makeEntry } from './entry.js';
import type { FlightPiece } from './flight.js';
import { until } from '../../test/helpers/poll.js';

const piece = (bytes: number, fill = 1): FlightPiece => ({ audio: Buffer.alloc(bytes, fill), seconds: bytes / 44100, stepTime: 1 });

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'voicegate-cache-'));
}

test('an entry is read back exactly, words included; a changed byte anywhere makes it unreadable', () => {
  const entry = makeEntry([
    { audio: Buffer.from([1, 2, 3]), seconds: 0.5, words: [{ word: 'Hello', start: 0, end: 0.25 }] },
    { audio: Buffer.alloc(0), seconds: 0, words: [{ word: 'there.', start: 0.25, end: 0.5 }] },
    { audio: Buffer.from([4]), seconds: 0.1 },
  ]);
  const blob = encodeEntry(entry);
  assert.deepEqual(decodeEntry(blob), entry);
  for (const at of [0, 10, 40, blob.length - 1]) {
    const damaged = Buffer.from(blob);
    damaged[at] ^= 0x01;
    assert.equal(decodeEntry(damaged), null, `byte ${at}`);
  }
  assert.equal(decodeEntry(blob.subarray(0, blob.length - 1)), null);
});

test('memory and disk caps hold under a flood of distinct entries; the most recent stay', async () => {
  const dir = tempDir();
  try {
    const cache = new AudioCache({ memoryBytes: 50_000, diskBytes: 120_000, maxEntryBytes: 1 << 20, blobs: new FileBlobStorage(dir) });
    await cache.open();
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const id = entryId('org_a', 'jordan', i.toString(16).padStart(64, '0'));
      ids.push(id);
      cache.keep(id, [piece(4000 + i, i % 255)]);
      assert.ok(cache.memory.bytes <= 50_000, `memory ${cache.memory.bytes}`);
    }
    await cache.settled();
    const stats = cache.stats();
    assert.ok(stats.disk!.bytes <= 120_000, `disk ${stats.disk!.bytes}`);
    assert.ok(stats.memory.evictions > 150 && stats.disk!.evictions > 150);
    let files = 0;
    for await (const info of new FileBlobStorage(dir).list()) files += info.size;
    assert.equal(files, stats.disk!.bytes, 'what is on disk is what the index counts');
    // The newest is in memory; an older one only on disk, read back whole and brought into memory.
    assert.ok(await cache.lookup(ids[199]));
    const older = ids[185];
    assert.equal(cache.memory.get(older), null);
    const fromDisk = await cache.lookup(older);
    assert.deepEqual(fromDisk?.pieces[0].audio, Buffer.alloc(4185, 185 % 255));
    assert.ok(cache.memory.get(older));
    assert.equal(await cache.lookup(ids[0]), null);

    // A restart finds the disk tier's entries again.
    const again = new AudioCache({ memoryBytes: 50_000, diskBytes: 120_000, maxEntryBytes: 1 << 20, blobs: new FileBlobStorage(dir) });
    await again.open();
    assert.equal(again.stats().disk!.bytes, stats.disk!.bytes);
    assert.deepEqual((await again.lookup(ids[199]))?.pieces[0].audio, Buffer.alloc(4199, 199 % 255));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a corrupt disk entry is found by its digest, removed and treated as a miss', async () => {
  const dir = tempDir();
  try {
    const blobs = new FileBlobStorage(dir);
    const cache = new AudioCache({ memoryBytes: 0, diskBytes: 1 << 20, maxEntryBytes: 1 << 20, blobs });
    await cache.open();
    const id = entryId('org_a', 'jordan', 'f'.repeat(64));
    cache.keep(id, [piece(3000, 7)]);
    await cache.settled();
    assert.ok(await cache.lookup(id));
    const path = join(dir, ...id.split('/'));
    const bytes = readFileSync(path);
    bytes[bytes.length - 10] ^= 0xff;
    writeFileSync(path, bytes);
    assert.equal(await cache.lookup(id), null);
    await cache.settled();
    assert.equal(await blobs.stat(id), null, 'removed');
    assert.equal(cache.stats().disk!.corrupt, 1);
    assert.equal(cache.stats().disk!.entries, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('purge by organisation, by voice, or everything', async () => {
  const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null });
  const key = (n: number) => n.toString(16).padStart(64, '0');
  cache.keep(entryId('org_a', 'jordan', key(1)), [piece(10)]);
  cache.keep(entryId('org_a', 'emma', key(2)), [piece(10)]);
  cache.keep(entryId('org_b', 'jordan', key(3)), [piece(10)]);
  cache.keep(entryId('shared', 'jordan', key(4)), [piece(10)]);
  assert.equal(await cache.purge({ orgId: 'org_a', voiceId: 'emma' }), 1);
  assert.equal(await cache.purge({ voiceId: 'jordan' }), 3);
  assert.equal(cache.memory.size, 0);
  cache.keep(entryId('org_b', 'emma', key(5)), [piece(10)]);
  assert.equal(await cache.purge({ orgId: 'org_a' }), 0);
  assert.equal(await cache.purge(), 1);
  assert.equal(cache.memory.size, 0);
});

/** A source that hands out pieces when told to, and records how it ended. */
function controlledSource() {
  const state = { made: 0, runs: 0, ended: '' as '' | 'done' | 'aborted' | 'failed', next: null as null | (() => void), fail: false };
  const source = async function* (signal: AbortSignal): AsyncGenerator<FlightPiece> {
    state.runs++;
    try {
      for (let i = 0; i < 5; i++) {
        await new Promise<void>((resolve, reject) => {
          state.next = resolve;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
        if (state.fail) throw new Error('engine failed');
        state.made++;
        yield piece(100, i + 1);
      }
      state.ended = 'done';
    } catch (err) {
      state.ended = signal.aborted ? 'aborted' : 'failed';
      throw err;
    } finally {
      // Stopped between pieces (the flight returned it): as an abort, if the flight's signal says so.
      if (!state.ended && signal.aborted) state.ended = 'aborted';
    }
  };
  /** Lets the source make its next piece, once it is waiting to. */
  const step = async () => {
    await until(() => state.next !== null, { timeoutMs: 2000, intervalMs: 0, what: 'the source to wait' });
    const next = state.next!;
    state.next = null;
    next();
  };
  return { state, source, step };
}

async function drain(pieces: AsyncIterable<FlightPiece>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const p of pieces) out.push(p.audio);
  return Buffer.concat(out);
}

test('single flight: followers share one run, a leader that leaves does not stop it, and the completed run is kept', async () => {
  const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null });
  const id = entryId('org_a', 'jordan', 'a'.repeat(64));
  const { state, source, step } = controlledSource();
  const first = cache.flight(id, source);
  assert.equal(first.leader, true);
  const leaderLeaves = new AbortController();
  const leader = (async () => {
    for await (const _ of first.flight.follow(leaderLeaves.signal)) leaderLeaves.abort(new Error('client left'));
  })();
  await until(() => first.flight.following === 1, { timeoutMs: 2000, intervalMs: 0, what: 'the leader to follow' });
  const followers = Array.from({ length: 3 }, () => {
    const joined = cache.flight(id, source);
    assert.equal(joined.leader, false);
    return drain(joined.flight.follow(new AbortController().signal));
  });
  await until(() => first.flight.following === 4, { timeoutMs: 2000, intervalMs: 0, what: 'three followers beside the leader' });
  await step();
  // The leader's client leaves with the first piece: the others go on.
  await assert.rejects(leader, /client left/);
  for (let i = 1; i < 5; i++) {
    await until(() => state.made === i, { timeoutMs: 2000, intervalMs: 0, what: `piece ${i}` });
    await step();
  }
  const heard = await Promise.all(followers);
  const expected = Buffer.concat([1, 2, 3, 4, 5].map((n) => Buffer.alloc(100, n)));
  for (const audio of heard) assert.deepEqual(audio, expected);
  assert.equal(state.runs, 1);
  assert.equal(state.ended, 'done');
  await first.flight.completed;
  await until(() => cache.inFlight === 0, { timeoutMs: 2000, intervalMs: 0, what: 'the flight to end' });
  assert.deepEqual(Buffer.concat((await cache.lookup(id))!.pieces.map((p) => p.audio)), expected);
});

test('single flight: when every follower leaves the run is aborted and nothing is kept; a failure reaches every follower and keeps nothing', async () => {
  const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 1 << 20, blobs: null });
  const id = entryId('org_a', 'jordan', 'b'.repeat(64));
  const abandoned = controlledSource();
  const { flight } = cache.flight(id, abandoned.source);
  const leaves = new AbortController();
  const reading = drain(flight.follow(leaves.signal));
  await abandoned.step();
  await until(() => abandoned.state.made === 1, { timeoutMs: 2000, intervalMs: 0, what: 'the first piece' });
  leaves.abort(new Error('gone'));
  await assert.rejects(reading, /gone/);
  assert.equal(await flight.completed, false);
  assert.equal(abandoned.state.ended, 'aborted');
  assert.equal(await cache.lookup(id), null);

  const failing = controlledSource();
  const again = cache.flight(id, failing.source);
  assert.equal(again.leader, true, 'an aborted flight is not joined');
  const readers = [drain(again.flight.follow(new AbortController().signal)), drain(cache.flight(id, failing.source).flight.follow(new AbortController().signal))];
  failing.state.fail = true;
  await failing.step();
  for (const reader of readers) await assert.rejects(reader, /engine failed/);
  assert.equal(await again.flight.completed, false);
  assert.equal(await cache.lookup(id), null);
});

test('single flight: a run larger than an entry may be is neither joined once it has grown so, nor kept', async () => {
  const cache = new AudioCache({ memoryBytes: 1 << 20, diskBytes: 0, maxEntryBytes: 250, blobs: null });
  const id = entryId('org_a', 'jordan', 'c'.repeat(64));
  const big = controlledSource();
  const { flight } = cache.flight(id, big.source);
  const reading = drain(flight.follow(new AbortController().signal));
  for (let i = 0; i < 3; i++) {
    await big.step();
    await until(() => big.state.made === i + 1, { timeoutMs: 2000, intervalMs: 0, what: `piece ${i + 1}` });
  }
  await until(() => flight.oversize, { timeoutMs: 2000, intervalMs: 0, what: 'the run to outgrow an entry' });
  assert.equal(cache.flight(id, controlledSource().source).leader, true, 'a new request runs on its own');
  for (let i = 3; i < 5; i++) await big.step();
  assert.equal((await reading).length, 500, 'its follower still hears all of it');
  assert.equal(await flight.completed, true);
  assert.equal(cache.memory.size, 0);
});
