/**
 * @module store/postgres/migrate
 * Applies the pending migrations when a store opens. Several servers may
 * start at once against one database, so the whole check-and-apply runs
 * under a session advisory lock keyed by the schema: the first instance
 * migrates, the others wait, then find nothing left to do. Each migration
 * and its `schema_migrations` row commit together.
 */
import pg from 'pg';
import { clientConfig, type PostgresOptions } from './db.js';
import { storeError } from './errors.js';
import { MIGRATIONS, type Migration } from './migrations.js';

/** How long a starting instance waits for another one's migrations (and for each statement of its own). */
const MIGRATION_TIMEOUT_MS = 120_000;

export async function migrate(options: PostgresOptions, migrations: Migration[] = MIGRATIONS): Promise<void> {
  const client = new pg.Client({ ...clientConfig(options), statement_timeout: MIGRATION_TIMEOUT_MS, query_timeout: MIGRATION_TIMEOUT_MS + 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw storeError(err);
  }
  try {
    // Session lock: held across the transactions below, released when this connection ends too.
    await client.query("SELECT pg_advisory_lock(hashtext('voicegate.migrate.' || coalesce($1, current_schema(), '')))", [options.schema]);
    if (options.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${client.escapeIdentifier(options.schema)}`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      try {
        await client.query('BEGIN');
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    }
  } catch (err) {
    throw storeError(err);
  } finally {
    await client.end().catch(() => {});
  }
}
