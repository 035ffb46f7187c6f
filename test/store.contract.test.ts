/**
 * @module test/store.contract
 * Runs the shared store contract against every store that ships: SQLite in a
 * fresh temporary file, PostgreSQL in a fresh schema of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeContract } from './helpers/store-contract.js';

storeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-store-'));
  const store = openSqliteStore(join(dir, 'voicegate.sqlite'));
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
