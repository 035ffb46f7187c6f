/**
 * @module store/open
 * Opens the configured store: PostgreSQL when `store.databaseUrl` is set
 * (migrated on open), otherwise SQLite in the data directory.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export function storePath(config: Config): string {
  return join(config.dataDir, 'voicegate.sqlite');
}

export async function openStore(config: Config): Promise<Store> {
  const { databaseUrl, schema, poolSize, timeoutMs } = config.store;
  if (databaseUrl !== null) return openPostgresStore({ url: databaseUrl, schema, poolSize, timeoutMs });
  return openSqliteStore(storePath(config));
}
