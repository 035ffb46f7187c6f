/**
 * @module store/postgres/group-commit
 * Ledger writes of one organisation share one statement. Each reservation
 * and settlement locks its organisation's row, so one organisation's writes
 * run one at a time whatever the pool size, each paying its own round trip
 * and commit (a WAL flush). Here they queue per organisation: while one
 * batch runs, the writes that arrive wait, and the next batch takes all of
 * them, handed together to one batch writer (ledger-batch.ts), which writes
 * them in a single statement: its own transaction, committed when it returns.
 * Every write's promise settles after that, so nothing is reported charged or
 * reserved before it is durable. If the statement fails, it wrote nothing,
 * and each write is retried alone, so a bad write fails by itself; an outage
 * fails them all at once. Organisations never share a statement, so lock
 * order across servers cannot deadlock.
 */
import { ApiError } from '../../errors/api-error.js';
import type { Db, Run } from './db.js';
import type { Outcome } from './ledger-batch.js';

/** Writes per batch at most, so one statement never holds the row for long. */
const MAX_BATCH = 64;

/**
 * Writes every item of one organisation in one statement of `run` (outside any transaction, so
 * the statement is its own): an outcome per item, in order; throws, having written nothing, when
 * the statement fails.
 */
export type BatchWriter<W> = (run: Run, orgId: string, writes: W[]) => Promise<Outcome[]>;

interface Pending<W> {
  write: W;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class OrgGroupCommit<W> {
  private readonly queues = new Map<string, Pending<W>[]>();
  /** Batches committed so far (for tests and diagnostics). */
  commits = 0;

  constructor(
    private readonly db: Db,
    private readonly writer: BatchWriter<W>,
  ) {}

  run<T>(orgId: string, write: W): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item: Pending<W> = { write, resolve: resolve as (value: unknown) => void, reject };
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
      await this.commit(orgId, queue.splice(0, MAX_BATCH));
    }
  }

  private async commit(orgId: string, batch: Pending<W>[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.writer(this.db.query, orgId, batch.map((item) => item.write));
      this.commits++;
    } catch (err) {
      // db.query reports an outage as store_unavailable: retrying alone would only wait for it again.
      const outage = err instanceof ApiError && err.code === 'store_unavailable';
      if (batch.length === 1 || outage) for (const item of batch) item.reject(err);
      else for (const item of batch) await this.commit(orgId, [item]);
      return;
    }
    batch.forEach((item, at) => {
      const outcome = outcomes[at];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.err);
    });
  }
}
