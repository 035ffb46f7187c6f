/**
 * @module test/postgres.group-commit
 * One organisation's ledger writes on PostgreSQL share transactions: writes
 * that arrive while one runs go together into the next, each in its own
 * savepoint; a write that fails rolls back alone; organisations stay apart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb, type Db } from '../src/store/postgres/db.js';
import { OrgGroupCommit } from '../src/store/postgres/group-commit.js';
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

const insert = (org: string, x: number) => (run: Parameters<Parameters<OrgGroupCommit['run']>[1]>[0]) =>
  run(`INSERT INTO ${schema}.t (org, x) VALUES ($1, $2) RETURNING x`, [org, x]).then((rows) => rows[0]);

test('writes of one organisation that queue behind a transaction share the next one', { timeout: 20_000 }, async () => {
  const group = new OrgGroupCommit(db);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => group.run('org_a', insert('org_a', i))));
  assert.deepEqual(results.map((r) => (r as { x: number }).x), Array.from({ length: 20 }, (_, i) => i));
  assert.ok(group.commits < 20 && group.commits >= 2, `${group.commits} commits for 20 writes`);
  const [{ n }] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${schema}.t WHERE org = 'org_a'`);
  assert.equal(n, 20);
});

test('a write that fails rolls back alone; the others of its transaction commit', { timeout: 20_000 }, async () => {
  const group = new OrgGroupCommit(db);
  const outcomes = await Promise.allSettled([100, 101, 101, 102].map((x) => group.run('org_b', insert('org_b', x))));
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  const rows = await db.query<{ x: number }>(`SELECT x FROM ${schema}.t WHERE org = 'org_b' ORDER BY x`);
  assert.deepEqual(rows.map((r) => r.x), [100, 101, 102]);
});

test('organisations never share a transaction', { timeout: 20_000 }, async () => {
  const group = new OrgGroupCommit(db);
  await Promise.all([group.run('org_c', insert('org_c', 200)), group.run('org_d', insert('org_d', 201))]);
  assert.equal(group.commits, 2);
});
