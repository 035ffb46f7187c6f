/**
 * @module store/sqlite/sqlite-store.test
 * What only SQLite has: upgrading a database made before charge keys and
 * reservations, and a write lock held by another process, which becomes
 * 503 `store_unavailable` after the busy timeout instead of a hang; and
 * durability: a charge or a credit is reported only once the WAL has been
 * flushed after its commit, a reservation without waiting for the disk, and
 * a flush that fails is a 503, not a charge reported lost or made twice;
 * and a batch with a failing write, which fails alone. (Several processes
 * on one file are in the store contract.)
 * (The behaviour every store shares is in test/store.contract.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { settled } from '../../../test/helpers/settled.js';
import { ApiError } from '../../errors/api-error.js';
import type { NewLedgerEntry } from '../store.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import type { Flush } from './wal-sync.js';

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

const NO_LIMITS = { maxConcurrent: null, rateLimit: null };

function charge(key: string, credits: number): NewLedgerEntry {
  return {
    orgId: 'org_d',
    kind: 'charge',
    credits: -credits,
    keyId: null,
    requestId: key.split('/')[0],
    chargeKey: key,
    clientRequestId: null,
    model: 'gepard-1.0',
    endpoint: '/tts/bytes',
    characters: credits,
    reason: null,
  };
}

/** A WAL flush the test controls: counted, and while `holding` its completions wait in `held`. */
function heldFlush() {
  const state = {
    holding: false,
    flushes: 0,
    held: [] as ((err: NodeJS.ErrnoException | null) => void)[],
    flush: ((_fd, done) => {
      state.flushes++;
      if (state.holding) state.held.push(done);
      else done(null);
    }) as Flush,
  };
  return state;
}

test('a charge is reported once the WAL is on disk; a reservation does not wait for the disk', { timeout: 20_000 }, async () => {
  const wal = heldFlush();
  const store = openSqliteStore(join(dir, 'durable.sqlite'), { flush: wal.flush });
  try {
    await store.orgs.create({ id: 'org_d', name: 'd', limits: NO_LIMITS });
    await store.ledger.append({ ...charge('top-up', -100), kind: 'credit', chargeKey: null, reason: 'test' });
    wal.holding = true;
    const before = wal.flushes;

    const reservations = await Promise.all(
      ['req_1/0', 'req_2/0', 'req_3/0'].map((id) => store.ledger.reserve({ id, orgId: 'org_d', credits: 5, ttlMs: 60_000 })),
    );
    assert.ok(reservations.every((r) => r.ok));
    assert.equal(wal.flushes, before, 'reservations were reported without a flush');

    const charges = ['req_1/0', 'req_2/0', 'req_3/0'].map((id) => store.ledger.settle(id, charge(id, 5)));
    assert.equal(await settled(Promise.race(charges)), false, 'no charge is reported before its flush ends');
    assert.equal(wal.held.length, 1, 'the three charges of one commit share one flush');
    wal.held.shift()!(null);
    const results = await Promise.all(charges);
    assert.deepEqual(results.map((r) => r.balance).sort((a, b) => b - a), [95, 90, 85]);

    const credit = store.ledger.append({ ...charge('top-up-2', -50), kind: 'credit', chargeKey: null, reason: 'test' });
    assert.equal(await settled(credit), false, 'a credit waits for the disk too');
    wal.held.shift()!(null);
    assert.equal((await credit).balance, 135);
  } finally {
    for (const done of wal.held) done(null);
    await store.close();
  }
});

test('a job or webhook claim that finds nothing wal.flushes nothing; one that takes a job is reported once it is on disk', { timeout: 20_000 }, async () => {
  const wal = heldFlush();
  const store = openSqliteStore(join(dir, 'claims.sqlite'), { flush: wal.flush });
  try {
    await store.orgs.create({ id: 'org_j', name: 'j', limits: NO_LIMITS });
    const now = Date.now();
    const before = wal.flushes;
    // Every server polls both queues each second: an empty poll must not touch the disk.
    for (let i = 0; i < 5; i++) {
      assert.equal(await store.jobs.claim('token_a', now, 30_000, 4), null);
      assert.equal(await store.jobs.claimWebhook(now, 30_000), null);
    }
    assert.equal(wal.flushes, before, 'empty claims flushed nothing');

    await store.jobs.create({
      id: 'job_1',
      orgId: 'org_j',
      keyId: null,
      spec: { inputs: ['Hello there.'] },
      model: 'gepard-1.0',
      characters: 12,
      credits: 12,
      segmentsTotal: 1,
      webhookUrl: null,
      idempotencyKey: null,
      createdAt: new Date(now).toISOString(),
    });
    wal.holding = true;
    const claim = store.jobs.claim('token_a', now, 30_000, 4);
    assert.equal(await settled(claim), false, 'a claim that took a job waits for its flush');
    assert.equal(wal.held.length, 1);
    wal.held.shift()!(null);
    assert.equal((await claim)?.id, 'job_1');
  } finally {
    for (const done of wal.held) done(null);
    await store.close();
  }
});

test('a flush that fails is a 503; the charge it held is in the ledger once, and its retry is a duplicate', { timeout: 20_000 }, async () => {
  let fail = false;
  const flush: Flush = (_fd, done) => done(fail ? Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }) : null);
  const store = openSqliteStore(join(dir, 'failing.sqlite'), { flush });
  try {
    await store.orgs.create({ id: 'org_d', name: 'd', limits: NO_LIMITS });
    await store.ledger.append({ ...charge('top-up', -100), kind: 'credit', chargeKey: null, reason: 'test' });
    await store.ledger.reserve({ id: 'req_9/0', orgId: 'org_d', credits: 7, ttlMs: 60_000 });
    fail = true;
    await assert.rejects(
      store.ledger.settle('req_9/0', charge('req_9/0', 7)),
      (err: unknown) => err instanceof ApiError && err.code === 'store_unavailable',
    );
    fail = false;
    const retried = await store.ledger.settle('req_9/0', charge('req_9/0', 7));
    assert.equal(retried.duplicate, true);
    assert.equal(retried.balance, 93);
    assert.equal(await store.ledger.sum('org_d'), 93);
  } finally {
    await store.close();
  }
});

test('a write that fails in a batch fails alone: the batch runs again with a savepoint per write', { timeout: 20_000 }, async () => {
  const store = openSqliteStore(join(dir, 'batch.sqlite'));
  try {
    await store.orgs.create({ id: 'org_d', name: 'd', limits: NO_LIMITS });
    await store.ledger.append({ ...charge('top-up', -100), kind: 'credit', chargeKey: null, reason: 'test' });
    // Three writes in one turn share one batch; the middle one names an organisation that does not exist.
    const outcomes = await Promise.allSettled([
      store.ledger.reserve({ id: 'req_1/0', orgId: 'org_d', credits: 5, ttlMs: 60_000 }),
      store.ledger.settle('req_x/0', { ...charge('req_x/0', 3), orgId: 'org_unknown' }),
      store.ledger.settle('req_2/0', charge('req_2/0', 7)),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(await store.ledger.reserved('org_d'), 5, 'the hold stands');
    assert.equal(await store.ledger.sum('org_d'), 93);
    assert.equal((await store.ledger.settle('req_1/0', charge('req_1/0', 5))).balance, 88);
    assert.equal(await store.ledger.reserved('org_d'), 0);
  } finally {
    await store.close();
  }
});
