/**
 * @module store/postgres/postgres-store
 * The scale-out store: the same `Store` contract as SQLite on PostgreSQL, so
 * several servers can share one set of accounts, voices and dictionaries.
 * Every balance change and every reservation decided in the database first
 * locks its organisation's row (`SELECT … FOR UPDATE`), so the reserve rule
 * (balance − open holds > 0) and charge-key idempotency hold however many
 * servers race, and all writers take locks in the same order (organisation
 * first), so they cannot deadlock. Each server holds its reservations in
 * memory, backed by one share row per organisation that every server counts
 * (../shares.ts): most are granted from the share's spare with no round trip.
 * Its holds and its share's expiry come from its own clock, and rows lapse by
 * the database's; the share outlives its holds by a quarter of their time, so
 * only clocks minutes apart would matter. Cloned-voice clips are stored in
 * the database (`bytea`). A file per repository (`orgs.ts`, `keys.ts`,
 * `ledger.ts`, `voices.ts`, `dictionaries.ts`, `jobs.ts`), their rows mapped
 * by the mappers both stores share (../account-rows.ts, ../ledger-row.ts,
 * ../job-row.ts); this file opens the pool, migrates and assembles them.
 */
import type { Store } from '../store.js';
import { openDb, type PostgresOptions } from './db.js';
import { postgresDicts } from './dictionaries.js';
import { postgresJobs } from './jobs.js';
import { postgresKeys } from './keys.js';
import { postgresUsage } from './usage.js';
import { postgresAlerts } from './alerts.js';
import { postgresLedger } from './ledger.js';
import { migrate } from './migrate.js';
import { postgresOrgs } from './orgs.js';
import { postgresVoices } from './voices.js';

export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  await migrate(options);
  const db = openDb(options);
  const { ledger, dropShares } = postgresLedger(db, options.outageShareCredits ?? null);
  return {
    orgs: postgresOrgs(db),
    keys: postgresKeys(db),
    usage: postgresUsage(db),
    alerts: postgresAlerts(db),
    ledger,
    voices: postgresVoices(db),
    dicts: postgresDicts(db),
    // The job queue: one statement per operation.
    jobs: postgresJobs(db.query),
    async close() {
      // Other servers need not wait for this one's shares to lapse.
      await dropShares().catch(() => {});
      await db.end();
    },
  };
}
