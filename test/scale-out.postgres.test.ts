/**
 * @module test/scale-out.postgres
 * Two servers sharing one PostgreSQL schema: they may open it at the same
 * moment while it is empty (one migrates) and start listening at the same
 * moment (both create or find the implicit organisation), and what one
 * stores the other serves.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { tempDataDir } from './helpers/server.js';

const schema = freshSchemaName();
const apps: App[] = [];

after(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await dropSchema(schema);
});

function config() {
  return loadConfig({
    env: {},
    overrides: {
      dataDir: tempDataDir(),
      accounts: { enabled: false },
      server: { host: '127.0.0.1', port: 0 },
      engines: { espeak: { type: 'espeak', workers: 1 } },
      store: { databaseUrl: TEST_DATABASE_URL, schema },
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
