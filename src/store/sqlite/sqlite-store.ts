/**
 * @module store/sqlite/sqlite-store
 * The embedded store: SQLite through better-sqlite3 in WAL mode, so the CLI
 * can work on the same file while the server runs. Statements are prepared
 * once; a ledger append is one transaction (insert row, update balance), and
 * every write transaction takes the write lock at its start (`BEGIN
 * IMMEDIATE`), so a reservation's check and insert see no other writer
 * between them, whichever process it is in. Reservations are held in this
 * process's memory, backed by one row per organisation that every process
 * counts (shares.ts): most are granted from that row's spare with no write.
 * Charges, and the reservations the spare cannot grant, share group commits
 * (group-commit.ts) of the ledger's write transactions (ledger-writes.ts).
 * Commits do not wait for the disk on the event loop: a write that must
 * survive a power cut is reported done after a shared flush of the WAL on
 * libuv's thread pool (wal-sync.ts); reservations, key use and dropped holds
 * are not worth a flush of their own. The job queue's writes (jobs.ts) are
 * reported after a flush too, but for lease renewals. A file per repository
 * (`orgs.ts`, `keys.ts`, `ledger.ts`, `voices.ts`, `dictionaries.ts`,
 * `jobs.ts`) on a shared context (`context.ts`), their rows mapped by the
 * mappers both stores share; this file opens, migrates and assembles them.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { storeUnavailable } from '../errors.js';
import type { Store } from '../store.js';
import { guard, type SqliteContext } from './context.js';
import { sqliteDicts } from './dictionaries.js';
import { sqliteJobs } from './jobs.js';
import { sqliteKeys } from './keys.js';
import { sqliteLedger } from './ledger.js';
import { sqliteUsage } from './usage.js';
import { sqliteAlerts } from './alerts.js';
import { MIGRATIONS } from './migrations.js';
import { sqliteOrgs } from './orgs.js';
import { sqliteVoices } from './voices.js';
import { WalSync, type Flush } from './wal-sync.js';

export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}

export interface SqliteStoreOptions {
  /** How long a write waits for another process's lock. */
  busyTimeoutMs?: number;
  /** How the WAL reaches the disk, on the thread pool, for every flush (tests hold or fail it); by default store/sqlite/wal-sync decides. */
  flush?: Flush;
}

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? 5000);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  const wal = db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('synchronous = FULL'); // a migration is rare: it may wait for the disk
  migrate(db);
  // From here each commit reaches the OS at once and the disk through `walSync`.
  db.pragma('synchronous = NORMAL');
  const walSync = new WalSync(wal ? `${resolve(path)}-wal` : null, options.flush ? { flush: options.flush } : {});
  const flushed = (): Promise<void> => walSync.sync().catch((err) => Promise.reject(storeUnavailable(err)));
  /** Runs a write, and reports it once it is on disk. */
  const durable = async <T>(write: () => T): Promise<T> => {
    const result = write();
    await flushed();
    return result;
  };

  const context: SqliteContext = { db, durable, flushed };
  const { ledger, dropShares } = sqliteLedger(context);

  // The job queue (jobs.ts): its writes are reported once on disk, but for lease renewals.
  const jobs = sqliteJobs(db, { durable: (write) => durable(() => guard(write)), committed: guard, flushed });

  return {
    orgs: sqliteOrgs(context),
    keys: sqliteKeys(context),
    ledger,
    usage: sqliteUsage(context),
    alerts: sqliteAlerts(context),
    voices: sqliteVoices(context),
    dicts: sqliteDicts(context),
    jobs,
    flushStats: () => ({ flushes: walSync.flushes, onEventLoop: walSync.mode === 'event loop', averageMs: walSync.averageFlushMs }),
    async close() {
      // Another process need not wait for this one's shares to lapse.
      try {
        dropShares();
      } catch {
        // Locked or gone: the rows lapse on their own.
      }
      await walSync.close();
      db.close();
    },
  };
}
