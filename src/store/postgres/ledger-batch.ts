/**
 * @module store/postgres/ledger-batch
 * One organisation's queued reservations and settlements written in a fixed
 * handful of statements, however many there are (see group-commit.ts for the
 * queueing). Under the organisation's row lock: every settlement first (one
 * INSERT of all their ledger rows, one balance update, one DELETE of their
 * holds), then every reservation against the balance and holds that leaves
 * (one statement sweeps lapsed holds and reads the rest, one INSERT writes the
 * granted ones). Round trips, not rows, are what a transaction pays for on a
 * database across a network, so a batch of 16 costs about what one write did.
 * The rules are the store contract's, applied in queue order: a hold is
 * granted while balance − Σ open holds > 0; a charge key is written once.
 */
import type { AppendResult, LedgerEntry, NewLedgerEntry, Reservation, ReserveResult } from '../store.js';
import type { Run } from './db.js';

export type LedgerWrite =
  | { kind: 'reserve'; request: { id: string; orgId: string; credits: number; ttlMs: number } }
  | { kind: 'settle'; reservationId: string; entry: NewLedgerEntry };

export type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

export interface LedgerRow {
  id: number;
  org_id: string;
  kind: 'charge' | 'credit';
  credits: number;
  key_id: string | null;
  request_id: string | null;
  charge_key: string | null;
  client_request_id: string | null;
  model: string | null;
  endpoint: string | null;
  characters: number | null;
  reason: string | null;
  created_at: Date;
}

export function toEntry(row: LedgerRow): LedgerEntry {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    credits: row.credits,
    keyId: row.key_id,
    requestId: row.request_id,
    chargeKey: row.charge_key,
    clientRequestId: row.client_request_id,
    model: row.model,
    endpoint: row.endpoint,
    characters: row.characters,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
  };
}

/** The database clock in epoch milliseconds, the time base of reservations. */
export const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

const INSERT_ROWS = `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[])
  ON CONFLICT (charge_key) DO NOTHING RETURNING *`;

/** Sweeps the organisation's lapsed holds and reads what is left: the open total and the rows asked about. */
const HOLDS = `WITH clock AS (SELECT ${NOW_MS} AS now),
  swept AS (DELETE FROM reservations WHERE org_id = $1 AND expires_at <= (SELECT now FROM clock))
  SELECT (SELECT now FROM clock) AS now,
    (SELECT COALESCE(SUM(credits), 0)::bigint FROM reservations WHERE org_id = $1 AND expires_at > (SELECT now FROM clock)) AS reserved,
    COALESCE((SELECT json_agg(json_build_object('id', id, 'org_id', org_id, 'credits', credits, 'expires_at', expires_at)) FROM reservations
      WHERE id = ANY($2::text[]) AND NOT (org_id = $1 AND expires_at <= (SELECT now FROM clock))), '[]'::json) AS existing`;

const INSERT_HOLDS = `INSERT INTO reservations (id, org_id, credits, expires_at)
  SELECT u.id, $1, u.credits, u.expires_at FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS u(id, credits, expires_at)`;

/**
 * Inside a transaction: every write of `orgId`, an outcome for each in order. A write the rules
 * refuse (a hold id of another organisation, an unknown organisation's charge) fails alone; a
 * statement that fails throws, and the caller retries the writes one by one.
 */
export async function writeLedgerBatch(run: Run, orgId: string, writes: LedgerWrite[]): Promise<Outcome[]> {
  const [org] = await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1 FOR UPDATE', [orgId]);
  const outcomes: Outcome[] = new Array(writes.length);
  const settles = writes.flatMap((write, at) => (write.kind === 'settle' ? [{ at, write }] : []));
  const reserves = writes.flatMap((write, at) => (write.kind === 'reserve' ? [{ at, write }] : []));
  if (!org) {
    for (const { at } of settles) outcomes[at] = { ok: false, err: new Error(`organization ${orgId} does not exist`) };
    for (const { at } of reserves) outcomes[at] = { ok: true, value: { ok: false, balance: 0, reserved: 0 } satisfies ReserveResult };
    return outcomes;
  }
  let balance = org.balance;
  if (settles.length > 0) balance = await applySettles(run, orgId, balance, settles, outcomes);
  if (reserves.length > 0) await decideReserves(run, orgId, balance, reserves, outcomes);
  return outcomes;
}

async function applySettles(
  run: Run,
  orgId: string,
  balance: number,
  settles: { at: number; write: Extract<LedgerWrite, { kind: 'settle' }> }[],
  outcomes: Outcome[],
): Promise<number> {
  // The first write of a charge key inserts; a repeat in the same batch is its duplicate.
  const firstOfKey = new Map<string, NewLedgerEntry>();
  const rows: NewLedgerEntry[] = [];
  for (const { write } of settles) {
    const key = write.entry.chargeKey;
    if (key !== null && firstOfKey.has(key)) continue;
    if (key !== null) firstOfKey.set(key, write.entry);
    rows.push(write.entry);
  }
  const column = <K extends keyof NewLedgerEntry>(name: K) => rows.map((entry) => entry[name]);
  const inserted = await run<LedgerRow>(INSERT_ROWS, [
    rows.map(() => orgId),
    column('kind'),
    column('credits'),
    column('keyId'),
    column('requestId'),
    column('chargeKey'),
    column('clientRequestId'),
    column('model'),
    column('endpoint'),
    column('characters'),
    column('reason'),
  ]);
  // The balance after each row, in the order the ledger numbered them.
  inserted.sort((a, b) => a.id - b.id);
  const written = new Map<LedgerRow, number>();
  let change = 0;
  for (const row of inserted) {
    change += row.credits;
    written.set(row, balance + change);
  }
  balance += change;
  if (inserted.length > 0) await run('UPDATE orgs SET balance = balance + $1 WHERE id = $2', [change, orgId]);
  await run('DELETE FROM reservations WHERE org_id = $1 AND id = ANY($2::text[])', [orgId, settles.map(({ write }) => write.reservationId)]);

  const byKey = new Map(inserted.filter((row) => row.charge_key !== null).map((row) => [row.charge_key!, row]));
  const unkeyed = inserted.filter((row) => row.charge_key === null);
  const missing = [...firstOfKey.keys()].filter((key) => !byKey.has(key));
  const earlier = missing.length > 0 ? await run<LedgerRow>('SELECT * FROM ledger WHERE charge_key = ANY($1::text[])', [missing]) : [];
  const earlierByKey = new Map(earlier.map((row) => [row.charge_key!, row]));
  const claimed = new Set<LedgerRow>();
  for (const { at, write } of settles) {
    const key = write.entry.chargeKey;
    const row = key === null ? unkeyed.shift()! : (byKey.get(key) ?? earlierByKey.get(key)!);
    if (written.has(row) && !claimed.has(row)) {
      claimed.add(row);
      outcomes[at] = { ok: true, value: { entry: toEntry(row), balance: written.get(row)!, duplicate: false } satisfies AppendResult };
      continue;
    }
    // A key already in the ledger (or written earlier in this batch): nothing is written; the balance now.
    const now = row.org_id === orgId ? balance : (await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1', [row.org_id]))[0].balance;
    outcomes[at] = { ok: true, value: { entry: toEntry(row), balance: now, duplicate: true } satisfies AppendResult };
  }
  return balance;
}

async function decideReserves(
  run: Run,
  orgId: string,
  balance: number,
  reserves: { at: number; write: Extract<LedgerWrite, { kind: 'reserve' }> }[],
  outcomes: Outcome[],
): Promise<void> {
  const [state] = await run<{ now: number; reserved: number; existing: { id: string; org_id: string; credits: number; expires_at: number }[] }>(HOLDS, [
    orgId,
    reserves.map(({ write }) => write.request.id),
  ]);
  const held = new Map<string, Reservation>(state.existing.map((row) => [row.id, { id: row.id, orgId: row.org_id, credits: row.credits, expiresAt: row.expires_at }]));
  let reserved = state.reserved;
  const granted: Reservation[] = [];
  for (const { at, write } of reserves) {
    const { id, credits, ttlMs } = write.request;
    const existing = held.get(id);
    if (existing) {
      // A repeated reserve of the same id holds nothing twice.
      outcomes[at] =
        existing.orgId === orgId
          ? { ok: true, value: { ok: true, reservation: existing, balance, reserved: reserved - existing.credits } satisfies ReserveResult }
          : { ok: false, err: new Error(`reservation ${id} belongs to another organization`) };
      continue;
    }
    if (balance - reserved <= 0) {
      outcomes[at] = { ok: true, value: { ok: false, balance, reserved } satisfies ReserveResult };
      continue;
    }
    const reservation: Reservation = { id, orgId, credits, expiresAt: state.now + ttlMs };
    outcomes[at] = { ok: true, value: { ok: true, reservation, balance, reserved } satisfies ReserveResult };
    held.set(id, reservation);
    granted.push(reservation);
    reserved += credits;
  }
  if (granted.length > 0)
    await run(INSERT_HOLDS, [orgId, granted.map((r) => r.id), granted.map((r) => r.credits), granted.map((r) => r.expiresAt)]);
}
