/**
 * @module store/postgres/group-commit
 * Ledger writes of one organisation share transactions. Each reservation and
 * settlement locks its organisation's row, so one organisation's writes run
 * one at a time whatever the pool size, each paying its own commit (a WAL
 * flush). Here they queue per organisation: while one transaction runs, the
 * writes that arrive wait, and the next transaction takes all of them, each
 * in its own savepoint (a write that fails rolls back alone). Every write's
 * promise settles after the shared COMMIT, so nothing is reported charged or
 * reserved before it is durable; if the commit fails, every write of that
 * transaction fails with it. Organisations never share a transaction, so
 * lock order across servers cannot deadlock.
 */
import type { Db, Run } from './db.js';
import { isUnavailable, storeError } from './errors.js';

/** Writes per transaction at most, so one transaction never holds the row for long. */
const MAX_BATCH = 64;

interface Pending {
  work: (run: Run) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  outcome?: { ok: true; value: unknown } | { ok: false; err: unknown };
}

export class OrgGroupCommit {
  private readonly queues = new Map<string, Pending[]>();
  /** Transactions committed so far (for tests and diagnostics). */
  commits = 0;

  constructor(private readonly db: Db) {}

  run<T>(orgId: string, work: (run: Run) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item: Pending = { work, resolve: resolve as (value: unknown) => void, reject };
      const queue = this.queues.get(orgId);
      if (queue) return void queue.push(item);
      this.queues.set(orgId, [item]);
      void this.drain(orgId);
    });
  }

  private async drain(orgId: string): Promise<void> {
    for (;;) {
      const queue = this.queues.get(orgId)!;
      if (queue.length === 0) {
        this.queues.delete(orgId);
        return;
      }
      await this.commit(queue.splice(0, MAX_BATCH));
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    try {
      await this.db.tx(async (run) => {
        for (const item of batch) {
          if (batch.length === 1) {
            item.outcome = { ok: true, value: await item.work(run) };
            continue;
          }
          await run('SAVEPOINT write');
          try {
            item.outcome = { ok: true, value: await item.work(run) };
            await run('RELEASE SAVEPOINT write');
          } catch (err) {
            // The connection is gone: the whole transaction is lost, and every write with it.
            if (isUnavailable(err)) throw err;
            await run('ROLLBACK TO SAVEPOINT write');
            item.outcome = { ok: false, err };
          }
        }
      });
      this.commits++;
    } catch (err) {
      // A write alone in its transaction throws straight out of it (and rolls it back), as a plain transaction would.
      const failure = storeError(err);
      for (const item of batch) item.reject(item.outcome && !item.outcome.ok ? item.outcome.err : failure);
      return;
    }
    for (const item of batch) {
      const outcome = item.outcome!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.err);
    }
  }
}
