/**
 * @module store/sqlite/sqlite-store.test
 * What only SQLite has: upgrading a database made before charge keys and
 * reservations, and a write lock held by another process, which becomes
 * 503 `store_unavailable` after the busy timeout instead of a hang.
 * (The behaviour every store shares is in test/store.contract.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { ApiError } from '../../errors/api-error.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'voicegate-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a database from before charge keys keeps its rows and gains keys and reservations', { timeout: 20_000 }, async () => {
  const path = join(dir, 'v2.sqlite');
  const old = new Database(path);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) {
    old.exec(migration.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
  }
  old.exec(`INSERT INTO orgs (id, name, created_at, balance) VALUES ('org_old', 'old', '2024-01-01T00:00:00.000Z', 7);
            INSERT INTO ledger (org_id, kind, credits, request_id, created_at) VALUES ('org_old', 'credit', 7, 'req_1', '2024-01-01T00:00:00.000Z')`);
  old.close();

  const store = openSqliteStore(path);
  try {
    const [row] = (await store.ledger.list('org_old', { limit: 10 })).data;
    assert.equal(row.requestId, 'req_1');
    assert.equal(row.chargeKey, null);
    assert.equal(row.clientRequestId, null);
    assert.equal(await store.ledger.sum('org_old'), 7);
    assert.equal((await store.ledger.reserve({ id: 'res_1', orgId: 'org_old', credits: 3, ttlMs: 60_000 })).ok, true);
    assert.equal(await store.ledger.reserved('org_old'), 3);
  } finally {
    await store.close();
  }
  const check = new Database(path, { readonly: true });
  const versions = (check.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
  check.close();
  assert.deepEqual(versions, MIGRATIONS.map((m) => m.version));
});

test('a write lock held elsewhere becomes store_unavailable after the busy timeout', { timeout: 20_000 }, async () => {
  const path = join(dir, 'locked.sqlite');
  const store = openSqliteStore(path, { busyTimeoutMs: 200 });
  const other = new Database(path);
  try {
    await store.orgs.create({ id: 'org_a', name: 'a', limits: { maxConcurrent: null, rateLimit: null } });
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    await assert.rejects(
      store.ledger.reserve({ id: 'res_1', orgId: 'org_a', credits: 1, ttlMs: 60_000 }),
      (err: unknown) => err instanceof ApiError && err.code === 'store_unavailable' && err.headers['retry-after'] === '1',
    );
    assert.ok(performance.now() - started < 5000);
    other.exec('ROLLBACK');
    assert.equal((await store.ledger.reserve({ id: 'res_2', orgId: 'org_a', credits: 1, ttlMs: 60_000 })).ok, false);
  } finally {
    other.close();
    await store.close();
  }
});
