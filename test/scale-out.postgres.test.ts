/**
 * @module test/scale-out.postgres
 * Servers sharing one PostgreSQL schema: they may open it at the same moment
 * while it is empty (one migrates) and start listening at the same moment
 * (both create or find the implicit organisation, and with accounts on make
 * one `default` organisation and key between them); what one stores the other
 * serves; and requests racing one balance through different servers overshoot
 * it by at most one request.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { tempDataDir } from './helpers/server.js';
import { eventually } from './helpers/redis.js';

const schema = freshSchemaName();
const billingSchema = freshSchemaName();
const bootstrapSchema = freshSchemaName();
const apps: App[] = [];

after(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await dropSchema(schema);
  await dropSchema(billingSchema);
  await dropSchema(bootstrapSchema);
});

function config(overrides: Record<string, unknown> = {}) {
  return loadConfig({
    env: {},
    overrides: {
      dataDir: tempDataDir(),
      accounts: { enabled: false },
      server: { host: '127.0.0.1', port: 0, warmUp: false },
      engines: { espeak: { type: 'espeak', workers: 1, warmUpJobs: 0 } },
      store: { databaseUrl: TEST_DATABASE_URL, schema },
      ...overrides,
    },
  });
}

test('two servers start at once on a fresh schema and share their dictionaries', { timeout: 60_000 }, async () => {
  const logger = createLogger('silent');
  apps.push(...(await Promise.all([createApp(config(), logger), createApp(config(), logger)])));
  const [a, b] = await Promise.all(apps.map((app) => app.listen()));
  const created = await fetch(`${a}/pronunciation-dicts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'shared', items: [{ text: 'SQL', alias: 'sequel' }] }),
  });
  assert.equal(created.status, 200);
  const { id } = (await created.json()) as { id: string };
  const fetched = await fetch(`${b}/pronunciation-dicts/${id}`);
  assert.equal(fetched.status, 200);
  const body = (await fetched.json()) as { name: string; items: unknown[] };
  assert.equal(body.name, 'shared');
  assert.deepEqual(body.items, [{ text: 'SQL', alias: 'sequel' }]);
});

test('servers starting at once on an empty schema with accounts on bootstrap one organisation and one key', { timeout: 60_000 }, async () => {
  const logger = createLogger('silent');
  const shared = { store: { databaseUrl: TEST_DATABASE_URL, schema: bootstrapSchema }, accounts: { enabled: true, startingCredits: 500 } };
  const trio = await Promise.all([createApp(config(shared), logger), createApp(config(shared), logger), createApp(config(shared), logger)]);
  apps.push(...trio);
  await Promise.all(trio.map((app) => app.listen()));
  const made = trio.map((app) => app.bootstrap).filter((b) => b !== null);
  assert.equal(made.length, 1, 'one server bootstrapped');
  const store = trio[0].services.store;
  const orgs = await store.orgs.list();
  assert.deepEqual(orgs.map((o) => [o.name, o.balance]), [['default', 500]]);
  assert.equal((await store.keys.list(orgs[0].id)).length, 1);
});

test('requests racing one balance through two servers: one is served, the books stay exact', { timeout: 60_000 }, async () => {
  const logger = createLogger('silent');
  const shared = { store: { databaseUrl: TEST_DATABASE_URL, schema: billingSchema }, accounts: { enabled: true, startingCredits: 0 } };
  const pair = await Promise.all([createApp(config(shared), logger), createApp(config(shared), logger)]);
  apps.push(...pair);
  const urls = await Promise.all(pair.map((app) => app.listen()));
  const admin = pair[0].services.accounts!.admin;
  const org = await admin.createOrg({ name: 'racing', credits: 10, limits: { max_concurrent: null, rate_limit: null } });
  const { key } = await admin.issueKey(org.id, 'race');
  const transcript = 'Twenty characters!!!';
  const statuses = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const response = await fetch(`${urls[i % 2]}/tts/bytes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model_id: 'gepard-1.0', transcript, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
  assert.ok(statuses.every((s) => s === 200 || s === 402), statuses.join(','));
  const store = pair[1].services.store;
  assert.equal((await store.orgs.get(org.id))?.balance, -10);
  assert.equal(await store.ledger.sum(org.id), -10);
  // Each server releases a request's reservation as its session ends, just after the response: poll, bounded.
  assert.ok(await eventually(async () => (await store.ledger.reserved(org.id)) === 0, 2000), `reserved ${await store.ledger.reserved(org.id)}, not 0`);
});
