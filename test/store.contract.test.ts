/**
 * @module test/store.contract
 * Runs the shared store contract and the job queue contract against every
 * store that ships: SQLite in a
 * fresh temporary file, PostgreSQL in a fresh schema of its own; another
 * server is another store on the same file or schema.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { jobStoreContract } from './helpers/job-store-contract.js';
import { storeContract } from './helpers/store-contract.js';

const sqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-store-'));
  const path = join(dir, 'voicegate.sqlite');
  const store = openSqliteStore(path);
  return {
    store,
    another: async () => openSqliteStore(path),
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const postgres = async () => {
  const schema = freshSchemaName();
  const options = { url: TEST_DATABASE_URL, schema, poolSize: 10, timeoutMs: 5000 };
  const store = await openPostgresStore(options);
  return {
    store,
    another: () => openPostgresStore(options),
    async cleanup() {
      await store.close();
      await dropSchema(schema);
    },
  };
};

storeContract('sqlite', sqlite);
storeContract('postgres', postgres);
jobStoreContract('sqlite', sqlite);
jobStoreContract('postgres', postgres);
