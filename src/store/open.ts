/**
 * @module store/open
 * Opens the configured store: PostgreSQL when `store.databaseUrl` is set
 * (migrated on open), otherwise SQLite in the data directory.
 */
import { join } from 'node:path';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/**
 * What opening a store reads from the server's config: its `dataDir` and `store` section. The
 * config is passed as it is; the store names only what it reads, so it needs nothing from config/.
 */
export interface StoreSettings {
  dataDir: string;
  store: { databaseUrl: string | null; schema: string | null; poolSize: number; timeoutMs: number };
}

export function storePath(config: StoreSettings): string {
  return join(config.dataDir, 'voicegate.sqlite');
}

export async function openStore(config: StoreSettings): Promise<Store> {
  const { databaseUrl, schema, poolSize, timeoutMs } = config.store;
  if (databaseUrl !== null) return openPostgresStore({ url: databaseUrl, schema, poolSize, timeoutMs });
  return openSqliteStore(storePath(config));
}
