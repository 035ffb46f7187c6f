/**
 * @module store/postgres/migrations
 * The PostgreSQL store's schema migrations, its own list apart from
 * SQLite's: one `.sql` file a version in `migrations/` (see
 * ../migration-files.ts). Statements are unqualified, so they land in the
 * configured schema (`search_path`).
 */
import { loadMigrations, type Migration } from '../migration-files.js';

export type { Migration };

export const MIGRATIONS: Migration[] = loadMigrations(new URL('./migrations/', import.meta.url));
