/**
 * @module store/postgres/postgres-store.test
 * What only PostgreSQL has: migrations raced by instances starting at once,
 * reopening a migrated schema, the schema option, and outages that surface
 * as 503 `store_unavailable` within the configured timeout instead of a hang.
 * (The behaviour every store shares is in test/store.contract.test.ts.)
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, test } from 'node:test';
import pg from 'pg';
import { ApiError } from '../../errors/api-error.js';
import { adminQuery, dropSchema, freshSchemaName, TEST_DATABASE_URL } from '../../../test/helpers/postgres.js';
import { withSearchPath } from './db.js';
import { MIGRATIONS } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';

const T = { timeout: 30_000 };
const NO_LIMITS = { maxConcurrent: null, rateLimit: null };
const schemas: string[] = [];

function schema(): string {
  const name = freshSchemaName();
  schemas.push(name);
  return name;
}

after(async () => {
  for (const name of schemas) await dropSchema(name);
});

function isStoreUnavailable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'store_unavailable' && err.status === 503 && err.headers['retry-after'] === '1';
}

test('instances that start at once on a fresh schema migrate it exactly once', T, async () => {
  const name = schema();
  const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ url: TEST_DATABASE_URL, schema: name, poolSize: 2, timeoutMs: 5000 })));
  try {
    const rows = await adminQuery<{ version: number }>(`SELECT version FROM ${pg.escapeIdentifier(name)}.schema_migrations ORDER BY version`);
    assert.deepEqual(
      rows.map((r) => r.version),
      MIGRATIONS.map((m) => m.version),
    );
    // Each instance sees what another wrote.
    await stores[0].orgs.create({ id: 'org_shared', name: 'shared', limits: NO_LIMITS });
    for (const store of stores) assert.equal((await store.orgs.get('org_shared'))?.name, 'shared');
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});

test('reopening a migrated schema applies nothing again and keeps the data', T, async () => {
  const name = schema();
  const options = { url: TEST_DATABASE_URL, schema: name, poolSize: 2, timeoutMs: 5000 };
  const first = await openPostgresStore(options);
  await first.orgs.create({ id: 'org_kept', name: 'kept', limits: NO_LIMITS });
  await first.close();
  const second = await openPostgresStore(options);
  try {
    assert.equal((await second.orgs.get('org_kept'))?.name, 'kept');
    const [{ n }] = await adminQuery<{ n: string }>(`SELECT count(*) AS n FROM ${pg.escapeIdentifier(name)}.schema_migrations`);
    assert.equal(Number(n), MIGRATIONS.length);
  } finally {
    await second.close();
  }
});

test('the tables live in the configured schema only', T, async () => {
  const a = schema();
  const b = schema();
  const storeA = await openPostgresStore({ url: TEST_DATABASE_URL, schema: a, poolSize: 1, timeoutMs: 5000 });
  const storeB = await openPostgresStore({ url: TEST_DATABASE_URL, schema: b, poolSize: 1, timeoutMs: 5000 });
  try {
    await storeA.orgs.create({ id: 'org_a', name: 'a', limits: NO_LIMITS });
    assert.equal(await storeB.orgs.get('org_a'), null);
    assert.equal(await storeB.orgs.count(), 0);
    const tables = await adminQuery<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [a]);
    assert.ok(tables.some((t) => t.table_name === 'reservations'));
  } finally {
    await storeA.close();
    await storeB.close();
  }
});

test('the schema is added to the options a URL already carries', () => {
  assert.equal(withSearchPath('postgres://u@h/db', null), 'postgres://u@h/db');
  const url = new URL(withSearchPath('postgres://u:p@h:5433/db?options=-c%20statement_timeout%3D100&sslmode=disable', 'tenant_a'));
  assert.equal(url.searchParams.get('options'), '-c statement_timeout=100 -c search_path=tenant_a');
  assert.equal(url.searchParams.get('sslmode'), 'disable');
  assert.equal(url.password, 'p');
});

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test('a database that never answers is store_unavailable within the timeout', T, async () => {
  const silent = await silentServer();
  try {
    const started = performance.now();
    await assert.rejects(openPostgresStore({ url: silent.url, schema: null, poolSize: 1, timeoutMs: 300 }), isStoreUnavailable);
    assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
  } finally {
    await silent.close();
  }
});

test('a refused connection is store_unavailable', T, async () => {
  // A port that was just free: bind it, then close it.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  await assert.rejects(openPostgresStore({ url: `postgres://postgres@127.0.0.1:${port}/test`, schema: null, poolSize: 1, timeoutMs: 1000 }), isStoreUnavailable);
});

test('a statement stuck behind a lock times out as store_unavailable, and the store recovers', T, async () => {
  const name = schema();
  const store = await openPostgresStore({ url: TEST_DATABASE_URL, schema: name, poolSize: 2, timeoutMs: 300 });
  const blocker = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await blocker.connect();
  try {
    await store.orgs.create({ id: 'org_locked', name: 'locked', limits: NO_LIMITS });
    await blocker.query('BEGIN');
    await blocker.query(`SELECT * FROM ${pg.escapeIdentifier(name)}.orgs WHERE id = 'org_locked' FOR UPDATE`);
    const started = performance.now();
    await assert.rejects(store.ledger.reserve({ id: 'res_1', orgId: 'org_locked', credits: 1, ttlMs: 60_000 }), isStoreUnavailable);
    await assert.rejects(
      store.ledger.append({
        orgId: 'org_locked',
        kind: 'credit',
        credits: 5,
        keyId: null,
        requestId: null,
        chargeKey: null,
        clientRequestId: null,
        model: null,
        endpoint: null,
        characters: null,
        reason: 'blocked',
      }),
      isStoreUnavailable,
    );
    assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
    await blocker.query('ROLLBACK');
    // Nothing of the failed writes remains, and the pool serves again.
    assert.equal(await store.ledger.sum('org_locked'), 0);
    assert.equal(await store.ledger.reserved('org_locked'), 0);
    assert.equal((await store.ledger.reserve({ id: 'res_2', orgId: 'org_locked', credits: 1, ttlMs: 60_000 })).ok, false);
  } finally {
    await blocker.end();
    await store.close();
  }
});

/** A TCP relay to the test database that can go silent: it then forwards nothing, and accepts but never answers. */
async function freezableRelay(): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  const target = new URL(TEST_DATABASE_URL);
  const sockets = new Set<Socket>();
  let frozen = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = createServer((client) => {
    track(client);
    if (frozen) return;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(TEST_DATABASE_URL);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test('an open store whose database goes silent answers store_unavailable instead of hanging', T, async () => {
  const name = schema();
  const relay = await freezableRelay();
  const store = await openPostgresStore({ url: relay.url, schema: name, poolSize: 2, timeoutMs: 300 });
  try {
    await store.orgs.create({ id: 'org_silent', name: 'silent', limits: NO_LIMITS });
    relay.freeze();
    const started = performance.now();
    // Pooled connections wait for a reply that never comes; new ones never finish connecting.
    const attempts = await Promise.allSettled([
      store.orgs.get('org_silent'),
      store.ledger.reserve({ id: 'res_1', orgId: 'org_silent', credits: 1, ttlMs: 60_000 }),
      store.ledger.reserved('org_silent'),
      store.keys.list('org_silent'),
    ]);
    for (const attempt of attempts) {
      assert.equal(attempt.status, 'rejected');
      assert.ok(isStoreUnavailable(attempt.reason), String(attempt.reason));
    }
    assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
  } finally {
    await relay.close();
    await store.close();
  }
});
