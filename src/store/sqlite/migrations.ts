/**
 * @module store/sqlite/migrations
 * The SQLite store's schema migrations: one `.sql` file a version in
 * `migrations/` (see ../migration-files.ts).
 */
import { loadMigrations, type Migration } from '../migration-files.js';

export type { Migration };

export const MIGRATIONS: Migration[] = loadMigrations(new URL('./migrations/', import.meta.url));
