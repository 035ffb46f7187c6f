/**
 * @module store/sqlite/group-commit
 * Ledger writes that arrive within one turn of the event loop share one
 * transaction, each in its own savepoint, so concurrent requests pay for one
 * commit (and its fsync) instead of one each, and a write that fails rolls
 * back only itself. Every write's promise settles after the shared commit:
 * nothing is reported charged or reserved before it is durable.
 */
import type Database from 'better-sqlite3';

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  outcome?: { ok: true; value: unknown } | { ok: false; err: unknown };
}

export class GroupCommit {
  /** Shared transactions committed so far (for tests and diagnostics). */
  commits = 0;
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly commit: Database.Transaction<(batch: Pending[]) => void>;

  /** `classify` turns a failure of the shared commit (a lock held too long) into what callers see. */
  constructor(db: Database.Database, private readonly classify: (err: unknown) => unknown) {
    // Each item's work is itself a transaction function: called inside this one, it is a savepoint.
    this.commit = db.transaction((batch: Pending[]) => {
      for (const item of batch) {
        try {
          item.outcome = { ok: true, value: item.work() };
        } catch (err) {
          item.outcome = { ok: false, err };
        }
      }
    });
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    try {
      this.commit.immediate(batch);
      this.commits++;
    } catch (err) {
      const failure = this.classify(err);
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const item of batch) {
      const outcome = item.outcome!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(this.classify(outcome.err));
    }
  }
}
