/**
 * @module store/sqlite/context
 * What every SQLite repository shares: the database, how a write that must
 * survive a power cut is reported (after the WAL's shared flush), and how a
 * lock held too long by another process becomes a 503.
 */
import type Database from 'better-sqlite3';
import { storeUnavailable } from '../errors.js';

export interface SqliteContext {
  db: Database.Database;
  /** Runs a write, and reports it once it is on disk. */
  durable<T>(write: () => T): Promise<T>;
  /** Resolves once what is committed so far is on disk. */
  flushed(): Promise<void>;
}

/** A database still locked by another process after `busy_timeout` is a 503 `store_unavailable`. */
export function classifyWriteError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'))) return storeUnavailable(err);
  return err;
}

export function guard<T>(write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw classifyWriteError(err);
  }
}
