/**
 * @module store/open
 * Opens the configured store: PostgreSQL when `store.databaseUrl` is set
 * (migrated on open), otherwise SQLite in the data directory. A PostgreSQL
 * server that cannot be reached yet (a container starting beside this one)
 * is waited for, up to `store.startupWaitMs`.
 */
import { join } from 'node:path';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/**
 * What opening a store reads from the server's config: its `dataDir`, `store` section and the outage credit of `accounts`. The
 * config is passed as it is; the store names only what it reads, so it needs nothing from config/.
 */
export interface StoreSettings {
  dataDir: string;
  store: { databaseUrl: string | null; schema: string | null; poolSize: number; timeoutMs: number; startupWaitMs: number };
  /** The credit each share keeps for an outage (PostgreSQL); absent or null: sized from recent grants. */
  accounts?: { outageShareCredits: number | null };
}

export function storePath(config: StoreSettings): string {
  return join(config.dataDir, 'voicegate.sqlite');
}

/** Errors that say the database is not there yet (no route, refused, starting up), not that it refused us. */
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
function notReachableYet(err: unknown): boolean {
  // The store reports these as 503 store_unavailable, with the driver's error as the cause.
  const cause = (err as { cause?: unknown }).cause;
  if (cause && cause !== err && notReachableYet(cause)) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NODE_CODES.has(code) || code === '57P03' || code.startsWith('08'))) return true;
  return /timeout|terminated unexpectedly|Connection terminated/i.test((err as Error).message ?? '');
}

export async function openStore(config: StoreSettings, onWait?: (err: Error, waitedMs: number) => void): Promise<Store> {
  const { databaseUrl, schema, poolSize, timeoutMs, startupWaitMs } = config.store;
  if (databaseUrl === null) return openSqliteStore(storePath(config));
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await openPostgresStore({ url: databaseUrl, schema, poolSize, timeoutMs, outageShareCredits: config.accounts?.outageShareCredits ?? null });
    } catch (err) {
      const waited = Date.now() - started;
      if (!notReachableYet(err) || waited >= startupWaitMs) throw err;
      onWait?.(err as Error, waited);
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 250 * 2 ** attempt, startupWaitMs - waited)));
    }
  }
}
