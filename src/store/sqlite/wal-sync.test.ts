/**
 * @module store/sqlite/wal-sync.test
 * A flush already running when a write asks does not count for it; the writes
 * that ask meanwhile share the next flush; a failed flush fails only its own
 * waiters; and the real `fdatasync` works on a real WAL file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { settled } from '../../../test/helpers/settled.js';
import { WalSync, type Flush } from './wal-sync.js';

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
  return { db, sync: new WalSync(`${path}-wal`, flush), pending };
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

  it('flushes a real WAL file with fdatasync on the thread pool', { timeout: 10_000 }, async () => {
    const path = join(dir, 'real.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (x)');
    const sync = new WalSync(`${path}-wal`);
    for (let i = 0; i < 5; i++) {
      db.prepare('INSERT INTO t VALUES (?)').run(i);
      await sync.sync();
    }
    assert.equal(sync.flushes, 5);
    await sync.close();
    db.close();
  });

  it('a database without a WAL file (in memory) has nothing to flush', async () => {
    const sync = new WalSync(null, () => assert.fail("no flush expected"));
    await sync.sync();
    assert.equal(sync.flushes, 0);
  });
});
