/**
 * @module store/sqlite/group-commit.test
 * Writes in one turn share a commit; each settles only after it; one that
 * fails rolls back alone; a commit that cannot start fails them all; writes
 * made while a batch is in flight wait for it and then share the next.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GroupCommit, inOneTransaction, type Outcome } from './group-commit.js';

function setup(path = ':memory:') {
  const db = new Database(path);
  db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
  const insert = db.transaction((x: number) => db.prepare('INSERT INTO t (x) VALUES (?)').run(x).changes);
  return { db, insert, group: new GroupCommit(inOneTransaction(db, (work: () => unknown) => work()), (err) => err) };
}

describe('GroupCommit', () => {
  it('writes made in one turn share one commit, and each resolves with its own result', async () => {
    const { db, insert, group } = setup();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => group.run(() => insert(i))));
    assert.deepEqual(results, Array(10).fill(1));
    assert.equal(group.commits, 1);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 10);
    await group.run(() => insert(10));
    assert.equal(group.commits, 2, 'a later turn commits on its own');
  });

  it('a write that fails rolls back alone; the others commit', async () => {
    const { db, insert, group } = setup();
    const outcomes = await Promise.allSettled([1, 2, 2, 3].map((x) => group.run(() => insert(x))));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual((db.prepare('SELECT x FROM t ORDER BY x').all() as { x: number }[]).map((r) => r.x), [1, 2, 3]);
  });

  it('nothing is reported before the commit: a batch whose commit cannot start fails every write', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'group-commit-')), 'db.sqlite');
    const { db, insert, group } = setup(path);
    db.pragma('busy_timeout = 0');
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE'); // another process holds the write lock
    const outcomes = await Promise.allSettled([group.run(() => insert(1)), group.run(() => insert(2))]);
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
    other.exec('ROLLBACK');
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 0);
    assert.equal(await group.run(() => insert(1)), 1, 'the next turn commits once the lock is free');
  });

  it('one batch is in flight at a time: writes made meanwhile go together in the next', async () => {
    const batches: number[][] = [];
    let finish: (() => void) | undefined;
    const group = new GroupCommit<number>(async (batch): Promise<Outcome[]> => {
      batches.push(batch);
      if (batches.length === 1) await new Promise<void>((done) => (finish = done));
      return batch.map((value) => ({ ok: true, value }));
    }, (err) => err);
    const first = group.run(1);
    const deadline = Date.now() + 5000;
    while (!finish && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const later = [group.run(2), group.run(3)];
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(batches, [[1]], 'nothing else starts while the first batch runs');
    finish!();
    assert.deepEqual(await Promise.all([first, ...later]), [1, 2, 3]);
    assert.deepEqual(batches, [[1], [2, 3]]);
    assert.equal(group.commits, 2);
  });
});
