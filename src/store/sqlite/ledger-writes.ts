/**
 * @module store/sqlite/ledger-writes
 * The ledger's write transactions on one SQLite connection: an append (the
 * row and its balance change), a settle (a hold becoming its charge), a
 * reservation that the process's share cannot grant from its spare (the
 * balance check, atomic under the write lock; shares.ts), and the batch that
 * runs many of them in one commit, with the shares they changed written at
 * its end. A batch runs without savepoints; if one of its writes fails, the
 * whole transaction is rolled back and run again with a savepoint per write,
 * so that write fails alone. The group commit carries each write as plain
 * data (`LedgerOp`).
 */
import type Database from 'better-sqlite3';
import { toEntry, type LedgerRow as SharedLedgerRow } from '../ledger-row.js';
import type { AppendResult, BudgetHold, NewLedgerEntry, ReserveResult } from '../store.js';
import type { Outcome } from './group-commit.js';
import type { ShareBook } from '../shares.js';

/** A ledger row as SQLite returns it. */
export type LedgerRow = SharedLedgerRow<string>;

export interface ReserveRequest {
  id: string;
  orgId: string;
  credits: number;
  ttlMs: number;
}

/** A write the group commit carries; `shrink` gives back a share's spare after releases. */
export type LedgerOp =
  | { kind: 'reserve'; request: ReserveRequest }
  /** A reservation against a key's budget too: a row of its own, naming the key, never from a share's spare. */
  | { kind: 'budget'; request: ReserveRequest & { budget: BudgetHold } }
  | { kind: 'settle'; reservationId: string; entry: NewLedgerEntry }
  | { kind: 'shrink'; orgId: string };

/** A write of a batch failed: the batch is run again, each write in a savepoint of its own. */
class WriteFailed extends Error {
  constructor(cause: unknown) {
    super('a write of the batch failed', { cause });
  }
}

export interface LedgerWrites {
  /** Writes the row and its balance change, unless its charge key is already in the ledger. */
  append: Database.Transaction<(entry: NewLedgerEntry) => AppendResult>;
  /** Many writes in one `BEGIN IMMEDIATE` transaction; one that fails rolls back alone. */
  batch: (ops: LedgerOp[]) => Outcome[];
  /** Deletes this process's share rows (the store is closing). */
  dropShares: () => void;
  /** Σ credits of the organisation's unexpired rows but this process's share. */
  othersReserved: (orgId: string, now: number) => number;
}

const SWEEP_EVERY_MS = 1000;
/** Organisations remembered for sweeping; past this the memory starts again (a few extra sweeps). */
const SWEEP_MEMORY = 10_000;

export function prepareLedgerWrites(db: Database.Database, book: ShareBook): LedgerWrites {
  const s = {
    orgAddBalance: db.prepare('UPDATE orgs SET balance = balance + ? WHERE id = ? RETURNING balance'),
    // A charge key already in the ledger inserts nothing and returns no row: the duplicate check is the insert itself.
    ledgerInsert: db.prepare(
      `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (charge_key) DO NOTHING RETURNING id`,
    ),
    ledgerByChargeKey: db.prepare('SELECT * FROM ledger WHERE charge_key = ?'),
    orgBalance: db.prepare('SELECT balance FROM orgs WHERE id = ?'),
    reservationSweep: db.prepare('DELETE FROM reservations WHERE org_id = ? AND expires_at <= ?'),
    // Every unexpired row of the organisation but this process's share: other processes' shares, and holds of a server
    // from before shares.
    othersSum: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM reservations WHERE org_id = ? AND expires_at > ? AND id <> ?'),
    reservationDeleteForOrg: db.prepare('DELETE FROM reservations WHERE id = ? AND org_id = ?'),
    shareWrite: db.prepare(
      `INSERT INTO reservations (id, org_id, credits, expires_at, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET credits = excluded.credits, expires_at = excluded.expires_at`,
    ),
    shareDelete: db.prepare('DELETE FROM reservations WHERE id = ?'),
    reservationGet: db.prepare('SELECT credits FROM reservations WHERE id = ? AND org_id = ? AND expires_at > ?'),
    keySpent: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM usage_hourly WHERE key_id = ? AND hour >= ?'),
    keyHeld: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM reservations WHERE key_id = ? AND expires_at > ?'),
    budgetInsert: db.prepare(
      `INSERT INTO reservations (id, org_id, credits, expires_at, created_at, key_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET credits = excluded.credits, expires_at = excluded.expires_at, key_id = excluded.key_id`,
    ),
  };

  const appendInTx = (entry: NewLedgerEntry): AppendResult => {
    const createdAt = new Date().toISOString();
    // An unknown organisation fails here, on the row's foreign key, before any balance moves.
    const inserted = s.ledgerInsert.get(
      entry.orgId,
      entry.kind,
      entry.credits,
      entry.keyId,
      entry.requestId,
      entry.chargeKey,
      entry.clientRequestId,
      entry.model,
      entry.endpoint,
      entry.characters,
      entry.reason,
      createdAt,
    ) as { id: number } | undefined;
    if (!inserted) {
      const existing = s.ledgerByChargeKey.get(entry.chargeKey) as LedgerRow;
      const current = s.orgBalance.get(existing.org_id) as { balance: number };
      return { entry: toEntry(existing), balance: current.balance, duplicate: true };
    }
    const updated = s.orgAddBalance.get(entry.credits, entry.orgId) as { balance: number };
    // The row is what was just written: only its id is read back.
    return { entry: { ...entry, id: inserted.id, createdAt }, balance: updated.balance, duplicate: false };
  };

  /** The charge, and its hold gone with it (gone either way: charged now, or by an earlier settle). */
  const settleInTx = (reservationId: string, entry: NewLedgerEntry): AppendResult => {
    const result = appendInTx(entry);
    // A hold this process does not have: a row of its own (a server from before shares), if there is one.
    if (!book.settle(reservationId, entry.orgId, result.balance)) s.reservationDeleteForOrg.run(reservationId, entry.orgId);
    return result;
  };

  const othersReserved = (orgId: string, now: number): number => (s.othersSum.get(orgId, now, book.rowId(orgId)) as { total: number }).total;

  /** When each organisation's lapsed rows were last deleted on this connection. */
  const swept = new Map<string, number>();
  /** A hold the share's spare could not grant: the database decides, under the write lock. */
  const reserveInTx = (request: ReserveRequest): ReserveResult => {
    const now = Date.now();
    const existing = book.existing(request, now);
    if (existing) return existing;
    const org = s.orgBalance.get(request.orgId) as { balance: number } | undefined;
    if (!org) return { ok: false, balance: 0, reserved: 0 };
    // Lapsed rows never count (the sum below skips them); deleting them is housekeeping, once a second is enough.
    if (now - (swept.get(request.orgId) ?? 0) >= SWEEP_EVERY_MS) {
      if (swept.size >= SWEEP_MEMORY) swept.clear();
      swept.set(request.orgId, now);
      s.reservationSweep.run(request.orgId, now);
    }
    return book.decide(request, org.balance, othersReserved(request.orgId, now), now);
  };

  /**
   * A hold against a key's budget as well as the balance, under the write lock: granted while
   * balance − (other rows + this process's open holds) > 0 and budget − (charged in the period +
   * the key's open rows) > 0. The rows of every key are counted by every process, as the shares are.
   */
  const reserveBudgetInTx = (request: ReserveRequest & { budget: BudgetHold }): ReserveResult => {
    const now = Date.now();
    const org = s.orgBalance.get(request.orgId) as { balance: number } | undefined;
    if (!org) return { ok: false, balance: 0, reserved: 0 };
    const reserved = othersReserved(request.orgId, now) + book.open(request.orgId, now);
    const existing = s.reservationGet.get(request.id, request.orgId, now) as { credits: number } | undefined;
    if (existing) {
      const reservation = { id: request.id, orgId: request.orgId, keyId: request.budget.keyId, credits: existing.credits, expiresAt: now + request.ttlMs };
      return { ok: true, reservation, balance: org.balance, reserved: reserved - existing.credits };
    }
    if (org.balance - reserved <= 0) return { ok: false, balance: org.balance, reserved };
    const { keyId, credits: budget, since } = request.budget;
    const spent = (s.keySpent.get(keyId, since) as { total: number }).total;
    const held = (s.keyHeld.get(keyId, now) as { total: number }).total;
    if (budget - (spent + held) <= 0) return { ok: false, balance: org.balance, reserved, budget: { spent, reserved: held } };
    const expiresAt = now + request.ttlMs;
    s.budgetInsert.run(request.id, request.orgId, request.credits, expiresAt, new Date(now).toISOString(), keyId);
    return { ok: true, reservation: { id: request.id, orgId: request.orgId, keyId, credits: request.credits, expiresAt }, balance: org.balance, reserved };
  };

  const apply = (op: LedgerOp): unknown => {
    if (op.kind === 'reserve') return reserveInTx(op.request);
    if (op.kind === 'budget') return reserveBudgetInTx(op.request);
    if (op.kind === 'settle') return settleInTx(op.reservationId, op.entry);
    book.shrink(op.orgId, Date.now());
    return undefined;
  };

  /** The rows of the shares this transaction changed, as the book now has them. */
  const writeShares = (): void => {
    const createdAt = new Date().toISOString();
    for (const share of book.changed()) {
      if (share.credits > 0) s.shareWrite.run(share.rowId, share.orgId, share.credits, share.expiresAt, createdAt);
      else s.shareDelete.run(share.rowId);
    }
  };

  // Each write is at most one statement that can fail (the ledger row's insert), and it fails first, so a batch
  // needs no savepoints until one fails.
  const plain = db.transaction((ops: LedgerOp[]): Outcome[] => {
    const outcomes = ops.map((op): Outcome => {
      try {
        return { ok: true, value: apply(op) };
      } catch (err) {
        throw new WriteFailed(err);
      }
    });
    writeShares();
    return outcomes;
  });
  const inSavepoint = db.transaction(apply);
  const guarded = db.transaction((ops: LedgerOp[]): Outcome[] => {
    const outcomes = ops.map((op): Outcome => {
      const mark = book.mark();
      try {
        return { ok: true, value: inSavepoint(op) };
      } catch (err) {
        book.rollbackTo(mark);
        return { ok: false, err };
      }
    });
    writeShares();
    return outcomes;
  });
  const run = (transaction: typeof plain, ops: LedgerOp[]): Outcome[] => {
    book.begin();
    try {
      const outcomes = transaction.immediate(ops);
      book.commit();
      return outcomes;
    } catch (err) {
      book.rollback();
      throw err;
    }
  };
  const batch = (ops: LedgerOp[]): Outcome[] => {
    try {
      return run(plain, ops);
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      return run(guarded, ops);
    }
  };

  const dropShares = db.transaction(() => {
    for (const share of book.rows()) s.shareDelete.run(share.rowId);
  });

  return { append: db.transaction(appendInTx), batch, dropShares: () => dropShares.immediate(), othersReserved };
}
