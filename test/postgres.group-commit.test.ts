/**
 * @module test/postgres.group-commit
 * One organisation's ledger writes on PostgreSQL share one statement: writes
 * that arrive while one batch runs go together into the next, handed to the
 * batch writer at once; when the batch's statement fails it writes nothing
 * and each write is retried alone, so a write that fails rolls back alone; an
 * outage fails them all without a retry; organisations stay apart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb, type Db } from '../src/store/postgres/db.js';
import { OrgGroupCommit, type BatchWriter } from '../src/store/postgres/group-commit.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';

const schema = freshSchemaName();
let db: Db;
before(async () => {
  db = openDb({ url: TEST_DATABASE_URL, schema: null, poolSize: 4, timeoutMs: 5000 });
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.t (org TEXT NOT NULL, x INTEGER PRIMARY KEY)`);
});
after(async () => {
  await db.end();
  await dropSchema(schema);
});

/** Inserts every x of the batch in one statement; the batch sizes it saw are kept. */
function inserter(): { writer: BatchWriter<number>; sizes: number[] } {
  const sizes: number[] = [];
  const writer: BatchWriter<number> = async (run, org, xs) => {
    sizes.push(xs.length);
    const rows = await run<{ x: number }>(`INSERT INTO ${schema}.t (org, x) SELECT $1, unnest($2::int[]) RETURNING x`, [org, xs]);
    return rows.map((row) => ({ ok: true, value: row.x }));
  };
  return { writer, sizes };
}

test('writes of one organisation that queue behind a batch share the next one', { timeout: 20_000 }, async () => {
  const { writer, sizes } = inserter();
  const group = new OrgGroupCommit(db, writer);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => group.run<number>('org_a', i)));
  assert.deepEqual(results, Array.from({ length: 20 }, (_, i) => i));
  assert.ok(group.commits < 20 && group.commits >= 2, `${group.commits} commits for 20 writes`);
  assert.ok(Math.max(...sizes) > 1, `batch sizes ${sizes.join(',')}`);
  const [{ n }] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${schema}.t WHERE org = 'org_a'`);
  assert.equal(n, 20);
});

test('a write that fails rolls back alone; the others of its batch commit', { timeout: 20_000 }, async () => {
  const { writer, sizes } = inserter();
  const group = new OrgGroupCommit(db, writer);
  // The first write holds the row while the other four queue; their batch fails on the repeated 101 and each is retried alone.
  const outcomes = await Promise.allSettled([99, 100, 101, 101, 102].map((x) => group.run('org_b', x)));
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  assert.ok(sizes.includes(4), `batch sizes ${sizes.join(',')}`);
  const rows = await db.query<{ x: number }>(`SELECT x FROM ${schema}.t WHERE org = 'org_b' ORDER BY x`);
  assert.deepEqual(rows.map((r) => r.x), [99, 100, 101, 102]);
});

test('an outcome the writer refuses fails that write alone without a retry', { timeout: 20_000 }, async () => {
  const calls: number[][] = [];
  const group = new OrgGroupCommit<number>(db, async (_run, _org, xs) => {
    calls.push(xs);
    return xs.map((x) => (x < 0 ? { ok: false, err: new RangeError(`negative ${x}`) } : { ok: true, value: x }));
  });
  const outcomes = await Promise.allSettled([1, 2, -3, 4].map((x) => group.run('org_e', x)));
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  assert.equal(calls.flat().length, 4, 'no write was retried');
});

test('an outage fails every write of the batch at once, with store_unavailable', { timeout: 20_000 }, async () => {
  const broken = openDb({ url: 'postgres://postgres@127.0.0.1:1/test', schema: null, poolSize: 1, timeoutMs: 500 });
  try {
    const { writer, sizes } = inserter();
    const group = new OrgGroupCommit(broken, writer);
    const outcomes = await Promise.allSettled([1, 2, 3].map((x) => group.run('org_f', x)));
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.equal((outcome.reason as { code?: string }).code, 'store_unavailable');
    }
    // The first write went alone, the two queued behind it together; neither batch was retried write by write.
    assert.deepEqual(sizes, [1, 2]);
  } finally {
    await broken.end();
  }
});

test('organisations never share a batch', { timeout: 20_000 }, async () => {
  const { writer } = inserter();
  const group = new OrgGroupCommit(db, writer);
  await Promise.all([group.run('org_c', 200), group.run('org_d', 201)]);
  assert.equal(group.commits, 2);
});
