/**
 * @module store/sqlite/group-commit
 * Ledger writes that arrive within one turn of the event loop share one
 * transaction, each in its own savepoint, so concurrent requests pay for one
 * commit instead of one each, and a write that fails rolls back only itself.
 * Every write's promise settles after the shared commit, and a write that
 * must survive a power cut (a charge) only after the flush that follows it
 * (`Durability`, see wal-sync.ts): one flush per batch.
 */
import type Database from 'better-sqlite3';

/** What became of one write of a batch: its result, or the error that rolled it back. */
export type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** Runs a batch in one transaction; throws when the transaction itself fails. */
export type BatchRunner<Op> = (batch: Op[]) => Outcome[];

/**
 * A runner on this thread: `apply` for each write inside one `BEGIN IMMEDIATE` transaction.
 * `apply` should run a transaction function of the same connection: inside this one, it is a savepoint.
 */
export function inOneTransaction<Op>(db: Database.Database, apply: (op: Op) => unknown): (batch: Op[]) => Outcome[] {
  const commit = db.transaction((batch: Op[]): Outcome[] =>
    batch.map((op) => {
      try {
        return { ok: true, value: apply(op) };
      } catch (err) {
        return { ok: false, err };
      }
    }),
  );
  return (batch) => commit.immediate(batch);
}

/** Which writes must reach the disk before they are reported, and how to get them there. */
export interface Durability<Op> {
  needs(op: Op): boolean;
  /** Resolves once everything committed so far is on disk. */
  sync(): Promise<void>;
}

interface Pending<Op> {
  op: Op;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<Op> {
  /** Shared transactions committed so far (for tests and diagnostics). */
  commits = 0;
  private queue: Pending<Op>[] = [];
  private scheduled = false;

  /** `classify` turns a failure (a lock held too long) into what callers see. */
  constructor(
    private readonly runBatch: BatchRunner<Op>,
    private readonly classify: (err: unknown) => unknown,
    private readonly durability?: Durability<Op>,
  ) {}

  run(op: Op): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.runBatch(batch.map((item) => item.op));
      this.commits++;
    } catch (err) {
      const failure = this.classify(err);
      for (const item of batch) item.reject(failure);
      return;
    }
    /** Asked for right after the commit, so it covers this batch; shared by all of its durable writes. */
    let flushed: Promise<void> | undefined;
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (!outcome.ok) item.reject(this.classify(outcome.err));
      else if (!this.durability?.needs(item.op)) item.resolve(outcome.value);
      else {
        flushed ??= this.durability.sync();
        flushed.then(
          () => item.resolve(outcome.value),
          (err) => item.reject(this.classify(err)),
        );
      }
    });
  }
}
