/**
 * @module store/sqlite/wal-sync.test
 * A flush already running when a write asks does not count for it; the writes
 * that ask meanwhile share the next flush; a failed flush fails only its own
 * waiters; flushes run on the event loop while the disk is fast and on the
 * thread pool once it is slow, with a probe now and then; and the real
 * `fdatasync` works on a real WAL file both ways.
 */
import assert from 'node:assert/strict';
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { settled } from '../../../test/helpers/settled.js';
import { FIRST_PROBE_MS, INLINE_FLUSH_MS, WalSync, type Flush } from './wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'voicegate-wal-sync-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL file to open, and a flush that finishes only when told to. */
function held() {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.sqlite`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x)');
  const pending: ((err: NodeJS.ErrnoException | null) => void)[] = [];
  const flush: Flush = (_fd, done) => void pending.push(done);
  return { db, sync: new WalSync(`${path}-wal`, { flush }), pending };
}

describe('WalSync', () => {
  it('a write that asks while a flush runs waits for the next one, which every such write shares', async () => {
    const { db, sync, pending } = held();
    const first = sync.sync();
    assert.equal(pending.length, 1);
    const later = [sync.sync(), sync.sync(), sync.sync()];
    assert.equal(pending.length, 1, 'no second flush while the first runs');
    pending[0](null);
    assert.equal(await settled(first), true);
    assert.equal(await settled(later[0]), false, 'the first flush may have begun before these commits');
    assert.equal(pending.length, 2, 'one flush for all three');
    pending[1](null);
    await Promise.all(later);
    assert.equal(sync.flushes, 2);
    await sync.close();
    db.close();
  });

  it('a failed flush rejects its waiters, and the next write gets a flush of its own', async () => {
    const { db, sync, pending } = held();
    const failing = sync.sync();
    pending[0](Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await assert.rejects(failing, /EIO/);
    const next = sync.sync();
    assert.equal(pending.length, 2);
    pending[1](null);
    await next;
    assert.equal(sync.flushes, 1);
    await sync.close();
    db.close();
  });

  it('close waits for a running flush, and later writes are refused', async () => {
    const { db, sync, pending } = held();
    const running = sync.sync();
    const closing = sync.close();
    assert.equal(await settled(closing), false);
    pending[0](null);
    await running;
    await closing;
    await assert.rejects(sync.sync(), /closed/);
    db.close();
  });

  for (const where of ['event loop', 'thread pool'] as const) {
    it(`flushes a real WAL file with fdatasync on the ${where}`, { timeout: 10_000 }, async () => {
      const path = join(dir, `real-${where.replace(' ', '-')}.sqlite`);
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec('CREATE TABLE t (x)');
      // On the loop, a clock that stands still times every flush at 0 ms, so the loop keeps them;
      // `fs.fdatasync` given alone runs every flush on the pool.
      const sync = new WalSync(`${path}-wal`, where === 'event loop' ? { now: () => 0 } : { flush: fdatasync });
      for (let i = 0; i < 5; i++) {
        db.prepare('INSERT INTO t VALUES (?)').run(i);
        await sync.sync();
      }
      assert.equal(sync.flushes, 5);
      assert.equal(sync.mode, where);
      await sync.close();
      db.close();
    });
  }

  it('a database without a WAL file (in memory) has nothing to flush', async () => {
    const sync = new WalSync(null, { flush: () => assert.fail('no flush expected'), flushNow: () => assert.fail('no flush expected') });
    await sync.sync();
    assert.equal(sync.flushes, 0);
  });

  describe('where flushes run', () => {
    /** A WAL file, a clock, and both flushes counted: each on-loop flush advances the clock by the next of `took`. */
    function timed(took: number[]) {
      const path = join(dir, `${Math.random().toString(36).slice(2)}.sqlite`);
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (x)');
      let clock = 0;
      const ran: string[] = [];
      const sync = new WalSync(`${path}-wal`, {
        flush: (_fd, done) => {
          ran.push('pool');
          setImmediate(() => done(null));
        },
        flushNow: () => {
          ran.push('loop');
          clock += took.shift() ?? 0.2;
        },
        now: () => clock,
      });
      return { db, sync, ran, advance: (ms: number) => (clock += ms) };
    }

    it('runs on the event loop while the disk flushes in under a millisecond', async () => {
      const { db, sync, ran } = timed([0.2, 0.4, 0.9, 0.3, 0.2]);
      for (let i = 0; i < 5; i++) await sync.sync();
      assert.deepEqual(ran, ['loop', 'loop', 'loop', 'loop', 'loop']);
      assert.equal(sync.mode, 'event loop');
      await sync.close();
      db.close();
    });

    it('moves to the thread pool once flushes are slow on average, and times the disk again after a second', async () => {
      const slow = INLINE_FLUSH_MS * 3;
      const { db, sync, ran, advance } = timed([0.2, slow, slow, slow, slow]);
      for (let i = 0; i < 8; i++) await sync.sync();
      // The average crosses the limit with the fourth slow flush; then the pool takes over.
      assert.deepEqual(ran, ['loop', 'loop', 'loop', 'loop', 'loop', 'pool', 'pool', 'pool']);
      assert.equal(sync.mode, 'thread pool');
      // A second later, one flush on the loop times the disk: fast now, so the loop keeps them.
      advance(FIRST_PROBE_MS);
      ran.length = 0;
      for (let i = 0; i < 3; i++) await sync.sync();
      assert.deepEqual(ran, ['loop', 'loop', 'loop']);
      assert.equal(sync.mode, 'event loop');
      await sync.close();
      db.close();
    });

    it('a lone slow flush leaves flushes on the loop', async () => {
      const { db, sync, ran } = timed([0.2, 50, 0.2]);
      for (let i = 0; i < 4; i++) await sync.sync();
      assert.deepEqual(ran, ['loop', 'loop', 'loop', 'loop']);
      await sync.close();
      db.close();
    });

    it('a slow first flush sends the next to the pool; each slow probe waits twice as long for the next', async () => {
      const { db, sync, ran, advance } = timed([5, 5, 0.2]);
      await sync.sync(); // slow: to the pool
      await sync.sync();
      advance(FIRST_PROBE_MS);
      await sync.sync(); // a probe, slow: the next one in two seconds
      advance(FIRST_PROBE_MS);
      await sync.sync();
      advance(FIRST_PROBE_MS);
      await sync.sync(); // a probe, fast: back on the loop
      await sync.sync();
      assert.deepEqual(ran, ['loop', 'pool', 'loop', 'pool', 'loop', 'loop']);
      await sync.close();
      db.close();
    });

    it('a flush on the loop that fails rejects its waiters like one on the pool', async () => {
      const path = join(dir, 'failing.sqlite');
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (x)');
      let fail = true;
      const sync = new WalSync(`${path}-wal`, {
        flush: () => assert.fail('the loop flushes'),
        flushNow: () => {
          if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        },
        now: () => 0,
      });
      await assert.rejects(sync.sync(), /EIO/);
      fail = false;
      await sync.sync();
      assert.equal(sync.flushes, 1);
      await sync.close();
      db.close();
    });
  });
});
