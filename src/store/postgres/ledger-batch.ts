/**
 * @module store/postgres/ledger-batch
 * One organisation's queued reservations and settlements written in one
 * round trip, however many there are (see group-commit.ts for the queueing):
 * a single call of the `ledger_write_batch_v3` function (migrations.ts, version
 * 3), which is its own transaction, so BEGIN and COMMIT cost nothing extra.
 * Under the organisation's row lock it applies every settlement first (one
 * ledger row per charge key, the balance, their holds), then every
 * reservation against the balance and holds that leaves, sweeping lapsed
 * holds. Round trips, not rows, are what a write pays for while it holds the
 * row, so a batch of 16 costs about what one write did. The rules are the
 * store contract's, applied in queue order: a hold is granted while
 * balance − Σ open holds > 0; a charge key is written once. This side only
 * lays the writes out as arrays and reads the outcomes back: the function
 * answers only what this side does not know (ids, times, balances, which
 * writes were duplicates and the stored rows of earlier ones), so a row a
 * write inserted is rebuilt from the values it sent. Being one
 * statement, the whole batch, the wait for the row lock included, is bounded
 * by `statement_timeout`, and the row is never held between round trips.
 */
import { toEntry, type LedgerRow as SharedLedgerRow } from '../ledger-row.js';
import type { AppendResult, LedgerEntry, NewLedgerEntry, ReserveResult } from '../store.js';
import type { Run } from './db.js';

export type LedgerWrite =
  | { kind: 'reserve'; request: { id: string; orgId: string; credits: number; ttlMs: number } }
  | { kind: 'settle'; reservationId: string; entry: NewLedgerEntry };

export type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A ledger row as `pg` returns it. */
export type LedgerRow = SharedLedgerRow<Date>;


/** The argument types are the columns' (bigint credits, integer characters), so the call resolves to the function as declared. */
const WRITE_BATCH = `SELECT ledger_write_batch_v3($1::text,
  $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[],
  $13::text[], $14::bigint[], $15::bigint[]) AS result`;

/**
 * What the function answers (migrations.ts, version 3), NULL for an unknown organisation:
 * the balance after the settlements, then per settlement in queue order the inserted row's id,
 * created_at (epoch ms) and the balance after it (nulls for a duplicate) and the position of the
 * first write of its key; the rows of keys already in the ledger; then per reservation in queue
 * order the hold's credits and expiry (null when not granted) and `reserved` before it (null when
 * the id is another organisation's hold). Empty lists come back as null.
 */
type BatchResult = [
  balance: number,
  ids: (number | null)[] | null,
  created: (number | null)[] | null,
  after: (number | null)[] | null,
  first: number[] | null,
  earlier: { entry: Omit<LedgerRow, 'created_at'> & { created_at: number }; balance: number }[] | null,
  holdCredits: (number | null)[] | null,
  holdExpires: (number | null)[] | null,
  reserved: (number | null)[] | null,
];

/**
 * Every write of `orgId` in one statement, an outcome for each in order. A write the rules
 * refuse (a hold id of another organisation, an unknown organisation's charge) fails alone; a
 * statement that fails wrote nothing and throws, and the caller retries the writes one by one.
 */
export async function writeLedgerBatch(run: Run, orgId: string, writes: LedgerWrite[]): Promise<Outcome[]> {
  const settles = writes.flatMap((write, at) => (write.kind === 'settle' ? [{ at, write }] : []));
  const reserves = writes.flatMap((write, at) => (write.kind === 'reserve' ? [{ at, write }] : []));
  const column = <K extends keyof NewLedgerEntry>(name: K) => settles.map(({ write }) => write.entry[name]);
  const [{ result }] = await run<{ result: BatchResult | null }>(WRITE_BATCH, [
    orgId,
    settles.map(({ write }) => write.reservationId),
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
    reserves.map(({ write }) => write.request.id),
    reserves.map(({ write }) => write.request.credits),
    reserves.map(({ write }) => write.request.ttlMs),
  ]);
  const outcomes: Outcome[] = new Array(writes.length);
  if (result === null) {
    for (const { at } of settles) outcomes[at] = { ok: false, err: new Error(`organization ${orgId} does not exist`) };
    for (const { at } of reserves) outcomes[at] = { ok: true, value: { ok: false, balance: 0, reserved: 0 } satisfies ReserveResult };
    return outcomes;
  }
  const [balance, ids, created, after, first, earlier, holdCredits, holdExpires, reserved] = result;
  // The row a write of this call inserted is the values it sent.
  const written = (i: number): LedgerEntry => {
    const { entry } = settles[i].write;
    return toEntry({
      id: ids![i]!,
      org_id: orgId,
      kind: entry.kind,
      credits: entry.credits,
      key_id: entry.keyId ?? null,
      request_id: entry.requestId ?? null,
      charge_key: entry.chargeKey ?? null,
      client_request_id: entry.clientRequestId ?? null,
      model: entry.model ?? null,
      endpoint: entry.endpoint ?? null,
      characters: entry.characters ?? null,
      reason: entry.reason ?? null,
      created_at: new Date(created![i]!),
    });
  };
  const stored = new Map((earlier ?? []).map((item) => [item.entry.charge_key, item]));
  settles.forEach(({ at, write }, i) => {
    let value: AppendResult;
    if (ids![i] !== null) value = { entry: written(i), balance: after![i]!, duplicate: false };
    else {
      const firstAt = first![i] - 1;
      if (ids![firstAt] !== null) value = { entry: written(firstAt), balance, duplicate: true };
      else {
        const item = stored.get(write.entry.chargeKey)!;
        value = { entry: toEntry({ ...item.entry, created_at: new Date(item.entry.created_at) }), balance: item.balance, duplicate: true };
      }
    }
    outcomes[at] = { ok: true, value };
  });
  reserves.forEach(({ at, write }, i) => {
    const before = reserved![i];
    const credits = holdCredits![i];
    if (before === null) outcomes[at] = { ok: false, err: new Error(`reservation ${write.request.id} belongs to another organization`) };
    else {
      const value: ReserveResult =
        credits === null
          ? { ok: false, balance, reserved: before }
          : { ok: true, reservation: { id: write.request.id, orgId, credits, expiresAt: holdExpires![i]! }, balance, reserved: before };
      outcomes[at] = { ok: true, value };
    }
  });
  return outcomes;
}
