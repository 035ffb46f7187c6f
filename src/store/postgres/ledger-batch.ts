/**
 * @module store/postgres/ledger-batch
 * One organisation's queued settlements, the reservations its share's spare
 * could not grant, and a shrinking share, written in one round trip however
 * many there are (see group-commit.ts for the queueing): a single call of the
 * `ledger_write_batch_v4` function (migrations/0004-ledger-write-batch-v4-reservations.sql), which is its
 * own transaction, so BEGIN and COMMIT cost nothing extra. Under the
 * organisation's row lock it applies every settlement first (one ledger row
 * per charge key, the balance), then decides every reservation by the store
 * contract's rule (balance − (other rows + the share's open holds) > 0, in
 * queue order) and writes this server's share (src/store/shares.ts). Round
 * trips, not rows, are what a write pays for while it holds the row, so a
 * batch of 16 costs about what one write did. This side lays the writes out
 * as arrays, tells the share book what was sent and what the database
 * answered, and rebuilds a row a write inserted from the values it sent.
 * Being one statement, the whole batch, the wait for the row lock included,
 * is bounded by `statement_timeout`, and the row is never held between round
 * trips.
 */
import { toEntry, type LedgerRow as SharedLedgerRow } from '../ledger-row.js';
import { SPARE_DIVISOR, SPARE_HOLDS, type HoldRequest, type ShareBook } from '../shares.js';
import type { AppendResult, BudgetHold, LedgerEntry, NewLedgerEntry, ReserveResult } from '../store.js';
import type { Run } from './db.js';

/** A write the group commit carries; `shrink` gives back a share's spare after releases. */
export type LedgerWrite =
  | { kind: 'reserve'; request: HoldRequest }
  /** A reservation against a key's budget too: a row of its own, decided by `ledger_reserve_budget_v1`. */
  | { kind: 'budget'; request: HoldRequest & { budget: BudgetHold } }
  | { kind: 'settle'; reservationId: string; entry: NewLedgerEntry }
  | { kind: 'shrink' };

export type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A ledger row as `pg` returns it. */
export type LedgerRow = SharedLedgerRow<Date>;


/** The argument types are the columns' (bigint credits, integer characters), so the call resolves to the function as declared. */
const WRITE_BATCH = `SELECT ledger_write_batch_v4($1::text, $2::text, $3::bigint, $4::bigint, $5::bigint, $6::bigint, $7::bigint,
  $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::int[], $18::text[],
  $19::bigint[]) AS result`;

/**
 * What the function answers (migrations/0004-ledger-write-batch-v4-reservations.sql), NULL for an unknown organisation:
 * the balance after the settlements, then per settlement in queue order the inserted row's id,
 * created_at (epoch ms) and the balance after it (nulls for a duplicate) and the position of the
 * first write of its key; the rows of keys already in the ledger; then per reservation in queue
 * order whether it was granted and what it saw reserved before it; the other rows' credits (null
 * without reservations); and the share's row as written (null: not written). Empty lists come
 * back as null.
 */
type BatchResult = [
  balance: number,
  ids: (number | null)[] | null,
  created: (number | null)[] | null,
  after: (number | null)[] | null,
  first: number[] | null,
  earlier: { entry: Omit<LedgerRow, 'created_at'> & { created_at: number }; balance: number }[] | null,
  granted: boolean[] | null,
  reserved: number[] | null,
  others: number | null,
  written: number | null,
];

/**
 * A batch writer for this server's share book: every write of `orgId` in one statement, an
 * outcome for each in order. A write the rules refuse (an unknown organisation's charge) fails
 * alone; a statement that fails wrote nothing and throws, and the caller retries the writes one
 * by one. `shrinkLater` is asked to queue a shrink when charges leave the share with too much spare.
 */
export function ledgerBatchWriter(book: ShareBook, shrinkLater: (orgId: string) => void) {
  const shared = sharedBatchWriter(book, shrinkLater);
  return async (run: Run, orgId: string, writes: LedgerWrite[]): Promise<Outcome[]> => {
    const budgets = writes.flatMap((write, at) => (write.kind === 'budget' ? [{ at, request: write.request }] : []));
    if (budgets.length === 0) return shared(run, orgId, writes);
    const rest = writes.flatMap((write, at) => (write.kind === 'budget' ? [] : [{ at, write }]));
    const outcomes: Outcome[] = new Array(writes.length);
    // Settlements first (they may free the budget), then the budget holds, while no other write of the organisation runs.
    if (rest.length > 0) (await shared(run, orgId, rest.map(({ write }) => write))).forEach((outcome, i) => (outcomes[rest[i].at] = outcome));
    const results = await budgetWrite(book, run, orgId, budgets.map(({ request }) => request));
    budgets.forEach(({ at }, i) => (outcomes[at] = { ok: true, value: results[i] }));
    return outcomes;
  };
}

const RESERVE_BUDGET = `SELECT ledger_reserve_budget_v1($1::text, $2::text, $3::bigint, $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[],
  $9::timestamptz[]) AS result`;

/**
 * Reservations against key budgets, decided in the database (migrations/0006-key-policies-and-usage-rollup.sql), each a
 * row of its own: no share's spare grants them. The share's open holds are counted as the batch
 * function counts them, and while the call runs none is granted from the spare, so the row the
 * database reads covers every hold this server has.
 */
async function budgetWrite(book: ShareBook, run: Run, orgId: string, requests: (HoldRequest & { budget: BudgetHold })[]): Promise<ReserveResult[]> {
  const now = Date.now();
  const decision = book.startDeciding(orgId, requests, [], now);
  let result: [number, boolean[], number[], number[], number[]] | null;
  try {
    [{ result }] = await run<{ result: typeof result }>(RESERVE_BUDGET, [
      orgId,
      book.rowId(orgId),
      decision.open,
      requests.map((r) => r.id),
      requests.map((r) => r.budget.keyId),
      requests.map((r) => r.credits),
      decision.expires,
      requests.map((r) => r.budget.credits),
      requests.map((r) => r.budget.since),
    ]);
  } finally {
    book.undecided(orgId);
  }
  if (result === null) return requests.map(() => ({ ok: false, balance: 0, reserved: 0 }));
  const [balance, granted, reserved, spent, held] = result;
  return requests.map((request, i): ReserveResult => {
    if (granted[i]) return { ok: true, reservation: { id: request.id, orgId, keyId: request.budget.keyId, credits: request.credits, expiresAt: decision.expires[i] }, balance, reserved: reserved[i] };
    const refusedByOrg = balance - reserved[i] <= 0;
    return refusedByOrg ? { ok: false, balance, reserved: reserved[i] } : { ok: false, balance, reserved: reserved[i], budget: { spent: spent[i], reserved: held[i] } };
  });
}

function sharedBatchWriter(book: ShareBook, shrinkLater: (orgId: string) => void) {
  return async (run: Run, orgId: string, writes: LedgerWrite[]): Promise<Outcome[]> => {
    const now = Date.now();
    const settles = writes.flatMap((write, at) => (write.kind === 'settle' ? [{ at, write }] : []));
    const reserves = writes.flatMap((write, at) => (write.kind === 'reserve' ? [{ at, write }] : []));
    const requests = reserves.map(({ write }) => write.request);
    const decision = requests.length > 0 ? book.startDeciding(orgId, requests, settles.map(({ write }) => write.reservationId), now) : null;
    const shrinkTo = decision === null && writes.some((write) => write.kind === 'shrink') ? book.shrinkTo(orgId, now) : null;
    const column = <K extends keyof NewLedgerEntry>(name: K) => settles.map(({ write }) => write.entry[name]);
    let result: BatchResult | null;
    try {
      [{ result }] = await run<{ result: BatchResult | null }>(WRITE_BATCH, [
        orgId,
        book.rowId(orgId),
        decision?.open ?? 0,
        shrinkTo,
        decision?.shareExpires ?? book.share(orgId)?.expiresAt ?? 0,
        // Holds of the smallest request's size the spare is sized for: at least the outage spare.
        decision?.spareHolds ?? SPARE_HOLDS,
        SPARE_DIVISOR,
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
        requests.map((request) => request.credits),
      ]);
    } catch (err) {
      book.undecided(orgId);
      throw err;
    }
    // A shrink answers nothing of its own.
    const outcomes: Outcome[] = writes.map(() => ({ ok: true, value: undefined }));
    if (result === null) {
      book.undecided(orgId);
      for (const { at } of settles) outcomes[at] = { ok: false, err: new Error(`organization ${orgId} does not exist`) };
      for (const { at } of reserves) outcomes[at] = { ok: true, value: { ok: false, balance: 0, reserved: 0 } satisfies ReserveResult };
      return outcomes;
    }
    const [balance, ids, created, after, first, earlier, granted, reserved, others, written] = result;
    // The row a write of this call inserted is the values it sent.
    const inserted = (i: number): LedgerEntry => {
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
      if (ids![i] !== null) value = { entry: inserted(i), balance: after![i]!, duplicate: false };
      else {
        const firstAt = first![i] - 1;
        if (ids![firstAt] !== null) value = { entry: inserted(firstAt), balance, duplicate: true };
        else {
          const item = stored.get(write.entry.chargeKey)!;
          value = { entry: toEntry({ ...item.entry, created_at: new Date(item.entry.created_at) }), balance: item.balance, duplicate: true };
        }
      }
      // The hold goes either way: charged now, or by an earlier settle.
      book.settle(write.reservationId, orgId, balance);
      outcomes[at] = { ok: true, value };
    });
    if (decision) {
      const results = book.decided(orgId, requests, decision, { granted: granted!, reserved: reserved!, balance, others: others!, credits: written! });
      reserves.forEach(({ at }, i) => (outcomes[at] = { ok: true, value: results[i] }));
    } else if (written !== null) book.wrote(orgId, written);
    if (book.unwritten(orgId)) shrinkLater(orgId);
    return outcomes;
  };
}
