/**
 * @module store/sqlite/ledger-writes
 * The ledger's write transactions on one SQLite connection: an append (the
 * row and its balance change), a settle (a reservation becoming its charge)
 * and a reservation (the balance check and the hold, atomic under the write
 * lock), and the batch that runs many of them in one commit. The group
 * commit carries each write as plain data (`LedgerOp`).
 */
import type Database from 'better-sqlite3';
import { toEntry, type LedgerRow as SharedLedgerRow } from '../ledger-row.js';
import type { AppendResult, NewLedgerEntry, Reservation, ReserveResult } from '../store.js';
import { inOneTransaction, type Outcome } from './group-commit.js';

/** A ledger row as SQLite returns it. */
export type LedgerRow = SharedLedgerRow<string>;

interface ReservationRow {
  id: string;
  org_id: string;
  credits: number;
  expires_at: number;
  created_at: string;
}

export interface ReserveRequest {
  id: string;
  orgId: string;
  credits: number;
  ttlMs: number;
}

/** A write the group commit carries. */
export type LedgerOp = { kind: 'reserve'; request: ReserveRequest } | { kind: 'settle'; reservationId: string; entry: NewLedgerEntry };

function toReservation(row: ReservationRow): Reservation {
  return { id: row.id, orgId: row.org_id, credits: row.credits, expiresAt: row.expires_at };
}

export interface LedgerWrites {
  /** Writes the row and its balance change, unless its charge key is already in the ledger. */
  append: Database.Transaction<(entry: NewLedgerEntry) => AppendResult>;
  /** The charge, and the reservation gone with it (gone either way: charged now, or by an earlier settle). */
  settle: Database.Transaction<(reservationId: string, entry: NewLedgerEntry) => AppendResult>;
  /** Holds credits while balance − Σ open reservations > 0; a repeated id holds nothing twice. */
  reserve: Database.Transaction<(request: ReserveRequest) => ReserveResult>;
  /** Many writes in one `BEGIN IMMEDIATE` transaction, each in its own savepoint. */
  batch: (ops: LedgerOp[]) => Outcome[];
}

const SWEEP_EVERY_MS = 1000;
/** Organisations remembered for sweeping; past this the memory starts again (a few extra sweeps). */
const SWEEP_MEMORY = 10_000;

export function prepareLedgerWrites(db: Database.Database): LedgerWrites {
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
    reservationGet: db.prepare('SELECT * FROM reservations WHERE id = ?'),
    reservationSum: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM reservations WHERE org_id = ? AND expires_at > ?'),
    reservationInsert: db.prepare('INSERT INTO reservations (id, org_id, credits, expires_at, created_at) VALUES (?, ?, ?, ?, ?)'),
    reservationDeleteForOrg: db.prepare('DELETE FROM reservations WHERE id = ? AND org_id = ?'),
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

  const settle = db.transaction((reservationId: string, entry: NewLedgerEntry): AppendResult => {
    const result = appendInTx(entry);
    s.reservationDeleteForOrg.run(reservationId, entry.orgId);
    return result;
  });

  /** When each organisation's lapsed holds were last deleted on this connection. */
  const swept = new Map<string, number>();
  const reserve = db.transaction((request: ReserveRequest): ReserveResult => {
    const org = s.orgBalance.get(request.orgId) as { balance: number } | undefined;
    if (!org) return { ok: false, balance: 0, reserved: 0 };
    const now = Date.now();
    // Lapsed holds never count (the sum below skips them); deleting them is housekeeping, once a second is enough.
    if (now - (swept.get(request.orgId) ?? 0) >= SWEEP_EVERY_MS) {
      if (swept.size >= SWEEP_MEMORY) swept.clear();
      swept.set(request.orgId, now);
      s.reservationSweep.run(request.orgId, now);
    }
    const reserved = (s.reservationSum.get(request.orgId, now) as { total: number }).total;
    const existing = s.reservationGet.get(request.id) as ReservationRow | undefined;
    if (existing) {
      if (existing.org_id !== request.orgId) throw new Error(`reservation ${request.id} belongs to another organization`);
      return { ok: true, reservation: toReservation(existing), balance: org.balance, reserved: reserved - existing.credits };
    }
    if (org.balance - reserved <= 0) return { ok: false, balance: org.balance, reserved };
    const expiresAt = now + request.ttlMs;
    s.reservationInsert.run(request.id, request.orgId, request.credits, expiresAt, new Date(now).toISOString());
    return { ok: true, reservation: { id: request.id, orgId: request.orgId, credits: request.credits, expiresAt }, balance: org.balance, reserved };
  });

  const batch = inOneTransaction<LedgerOp>(db, (op) => (op.kind === 'reserve' ? reserve(op.request) : settle(op.reservationId, op.entry)));
  return { append: db.transaction(appendInTx), settle, reserve, batch };
}
