/**
 * @module store/sqlite/group-commit.test
 * Writes in one turn share a commit; each settles only after it; one that
 * fails rolls back alone; a commit that cannot start fails them all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GroupCommit, inOneTransaction } from './group-commit.js';

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
});
