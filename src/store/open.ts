/**
 * @module store/open
 * Opens the configured store: SQLite in the data directory by default.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export function storePath(config: Config): string {
  return join(config.dataDir, 'voicegate.sqlite');
}

export function openStore(config: Config): Store {
  return openSqliteStore(storePath(config));
}
