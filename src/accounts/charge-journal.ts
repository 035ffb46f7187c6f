/**
 * @module accounts/charge-journal
 * This gateway's durable journal of charges the store could not take: a
 * SQLite file in WAL mode under the data directory, committed with
 * `synchronous = FULL` (an fsync), so a charge appended here survives a
 * `kill -9` or a power cut. A charge is appended at the moment it is due
 * (the gate's `charge`, when the store answers `store_unavailable`), with its
 * reservation id and charge key; the request then goes on as charged.
 *
 * Replay writes the entries to the store in the order they were appended,
 * each through the ledger's idempotent `settle` under its own charge key, so
 * an entry whose write committed before its answer was lost, or one replayed
 * twice (two processes on one data directory, a crash mid-replay), lands
 * exactly once. An entry leaves the journal only once the store has it. A
 * replay that meets the outage again stops there and keeps the rest, in
 * order, for the next one. An entry the store refuses for another reason
 * (its organisation is gone) is moved to a `rejected` table beside it and
 * logged, never retried for ever nor lost.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import type { LedgerRepository, NewLedgerEntry } from '../store/store.js';

/** How often a journal with entries tries the store again: well inside the 10 s it must drain in once the store answers. */
export const REPLAY_INTERVAL_MS = 1_000;

/** The store's answer for "not there right now" (every store maps its outages to it). */
export function isStoreOutage(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'store_unavailable';
}

interface Row {
  seq: number;
  reservation_id: string;
  entry: string;
}

export class ChargeJournal {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string, string, number]>;
  private readonly remove: Database.Statement<[number]>;
  private readonly reject: Database.Statement<[string, number]>;
  private readonly head: Database.Statement<[number], Row>;
  private readonly counting: Database.Statement<[], { n: number }>;
  private replaying: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Entries this process wrote to the store from the journal. */
  replayed = 0;
  /** The last replay met the outage (logged once, until a replay gets through). */
  private blocked = false;
  private count: number;

  constructor(
    readonly path: string,
    private readonly ledger: Pick<LedgerRepository, 'settle'>,
    private readonly logger: Logger,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    // Every append is on disk before the request it belongs to goes on.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS charges (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        reservation_id TEXT NOT NULL,
        charge_key TEXT NOT NULL UNIQUE,
        entry TEXT NOT NULL,
        due_at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS rejected (
        seq INTEGER PRIMARY KEY,
        reservation_id TEXT NOT NULL,
        charge_key TEXT NOT NULL,
        entry TEXT NOT NULL,
        due_at INTEGER NOT NULL,
        error TEXT NOT NULL
      );`);
    // A charge key appended twice (a retry of the same charge) is one entry.
    this.insert = this.db.prepare('INSERT OR IGNORE INTO charges (reservation_id, charge_key, entry, due_at) VALUES (?, ?, ?, ?)');
    this.remove = this.db.prepare('DELETE FROM charges WHERE seq = ?');
    this.reject = this.db.prepare('INSERT OR IGNORE INTO rejected (seq, reservation_id, charge_key, entry, due_at, error) SELECT seq, reservation_id, charge_key, entry, due_at, ? FROM charges WHERE seq = ?');
    this.head = this.db.prepare('SELECT seq, reservation_id, entry FROM charges WHERE seq > ? ORDER BY seq LIMIT 1');
    this.counting = this.db.prepare('SELECT count(*) AS n FROM charges');
    this.count = this.counting.get()!.n;
  }

  /** Entries waiting for the store. */
  get entries(): number {
    return this.count;
  }

  /** Appends a charge the store could not take; on disk when this returns. Starts the replay loop. */
  append(reservationId: string, entry: NewLedgerEntry): void {
    if (!entry.chargeKey) throw new Error('a journaled charge needs its charge key');
    const { changes } = this.insert.run(reservationId, entry.chargeKey, JSON.stringify(entry), Date.now());
    this.count += changes;
    this.schedule();
  }

  /**
   * Writes the entries to the store in order (one replay at a time; a call during one waits for
   * it). Resolves with how many landed; stops at the first outage and leaves the rest.
   */
  replay(): Promise<number> {
    this.replaying ??= this.drain().finally(() => (this.replaying = null));
    return this.replaying;
  }

  /** Replays now and then while entries wait (begun by `append`, and by `start` for a journal left by an earlier run). */
  start(): void {
    if (this.count > 0) this.schedule();
  }

  /** Stops the replay loop (entries stay on disk for the next start) and closes the file. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.replaying?.catch(() => {});
    this.db.close();
  }

  private schedule(): void {
    if (this.timer || !this.db.open) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.replay().then(() => {
        if (this.count > 0) this.schedule();
      });
    }, REPLAY_INTERVAL_MS);
    this.timer.unref();
  }

  private async drain(): Promise<number> {
    let landed = 0;
    let after = 0;
    for (;;) {
      if (!this.db.open) break;
      const row = this.head.get(after);
      if (!row) break;
      const entry = JSON.parse(row.entry) as NewLedgerEntry;
      try {
        await this.ledger.settle(row.reservation_id, entry);
      } catch (err) {
        if (isStoreOutage(err)) {
          if (!this.blocked) this.logger.warn({ entries: this.count }, 'the store is unavailable: journaled charges wait for it');
          this.blocked = true;
          break;
        }
        // Not the outage: the store will never take it (its organisation is gone). Kept aside, not lost.
        this.logger.error({ err, charge_key: entry.chargeKey, org_id: entry.orgId, credits: entry.credits }, 'the store refused a journaled charge; it is kept in the journal\'s rejected table');
        this.db.transaction(() => {
          this.reject.run(err instanceof Error ? err.message : String(err), row.seq);
          this.remove.run(row.seq);
        })();
        this.count = Math.max(0, this.count - 1);
        after = row.seq;
        continue;
      }
      if (this.db.open) this.remove.run(row.seq);
      this.count = Math.max(0, this.count - 1);
      this.replayed++;
      landed++;
      after = row.seq;
    }
    // Another process on the same data directory may have replayed some too.
    if (this.db.open) this.count = this.counting.get()!.n;
    if (landed > 0) {
      this.blocked = false;
      this.logger.info({ replayed: landed, left: this.count }, 'journaled charges written to the store');
    }
    return landed;
  }
}
