/**
 * @module store/postgres/ledger
 * The ledger in PostgreSQL (`LedgerRepository`). Every balance change and
 * every reservation decided in the database first locks its organisation's
 * row, so the reserve rule and charge-key idempotency hold however many
 * servers race. This server's reservations are held in memory, backed by one
 * share row per organisation that every server counts (../shares.ts): most
 * are granted from the share's spare with no round trip; one organisation's
 * queued settlements, decisions and shrinks share one statement
 * (group-commit.ts, ledger-batch.ts).
 */
import { randomBytes } from 'node:crypto';
import { checkReserveRequest } from '../checks.js';
import { toEntry } from '../ledger-row.js';
import { ShareBook } from '../shares.js';
import type { AppendResult, LedgerRepository, NewLedgerEntry, ReserveResult } from '../store.js';
import type { Db, Run } from './db.js';
import { OrgGroupCommit } from './group-commit.js';
import { ledgerBatchWriter, type LedgerRow, type LedgerWrite } from './ledger-batch.js';

/** The database clock in epoch milliseconds, the time base of reservations. */
const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** Locks the organisation's row for the rest of the transaction; null when it does not exist. */
async function lockOrg(run: Run, orgId: string): Promise<number | null> {
  const [row] = await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1 FOR UPDATE', [orgId]);
  return row ? row.balance : null;
}

/** Inside a transaction holding the organisation's lock: the row and its balance change, or the existing row. */
async function appendLocked(run: Run, entry: NewLedgerEntry): Promise<AppendResult> {
  const [inserted] = await run<LedgerRow>(
    `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (charge_key) DO NOTHING RETURNING *`,
    [entry.orgId, entry.kind, entry.credits, entry.keyId, entry.requestId, entry.chargeKey, entry.clientRequestId, entry.model, entry.endpoint, entry.characters, entry.reason],
  );
  if (inserted) {
    const [org] = await run<{ balance: number }>('UPDATE orgs SET balance = balance + $1 WHERE id = $2 RETURNING balance', [entry.credits, entry.orgId]);
    return { entry: toEntry(inserted), balance: org.balance, duplicate: false };
  }
  const [existing] = await run<LedgerRow>('SELECT * FROM ledger WHERE charge_key = $1', [entry.chargeKey]);
  const [org] = await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1', [existing.org_id]);
  return { entry: toEntry(existing), balance: org.balance, duplicate: true };
}

/** The repository, and what the store's close does with it: its shares are dropped, for other servers not to wait for them. */
export function postgresLedger(db: Db, outageShareCredits: number | null = null): { ledger: LedgerRepository; dropShares(): Promise<void> } {
  const { query } = db;
  // This server's reservations: in memory, backed by one share row per organisation (../shares.ts).
  const book = new ShareBook(`share_${randomBytes(8).toString('hex')}`, outageShareCredits);
  // One organisation's queued settlements, decisions and shrinks share one statement, a call of ledger_write_batch_v4
  // (group-commit.ts, ledger-batch.ts).
  const shrink = (orgId: string) => {
    group.run(orgId, { kind: 'shrink' }).catch(() => {
      // The row stays larger than the holds until the next write of the organisation: it only counts more.
    });
  };
  const group: OrgGroupCommit<LedgerWrite> = new OrgGroupCommit<LedgerWrite>(db, ledgerBatchWriter(book, shrink));
  /** Reservations on their way to the database, so a repeated id waits for the first instead of holding twice. */
  const deciding = new Map<string, Promise<ReserveResult>>();
  const ledger: LedgerRepository = {
    append(entry) {
      return db.tx(async (run) => {
        if ((await lockOrg(run, entry.orgId)) === null) throw new Error(`organization ${entry.orgId} does not exist`);
        return appendLocked(run, entry);
      });
    },
    async reserve(request) {
      checkReserveRequest(request);
      // A key's budget is decided in the database, every time: its holds are rows that every server counts.
      const { budget } = request;
      if (budget) return group.run<ReserveResult>(request.orgId, { kind: 'budget', request: { ...request, budget } });
      // Most holds fit into the share's spare: no round trip.
      const local = book.grantFromSpare(request, Date.now());
      if (local) return local;
      const pending = deciding.get(request.id);
      if (pending) {
        const first = await pending;
        return first.ok && first.reservation.orgId !== request.orgId ? Promise.reject(new Error(`reservation ${request.id} belongs to another organization`)) : first;
      }
      const decision = group.run<ReserveResult>(request.orgId, { kind: 'reserve', request });
      deciding.set(request.id, decision);
      try {
        return await decision;
      } catch (err) {
        // It was sent only to resize a spare that still covers it: the database being away, the spare grants it.
        const spare = book.grantFromSpare(request, Date.now(), false);
        if (spare) return spare;
        throw err;
      } finally {
        deciding.delete(request.id);
      }
    },
    settle(reservationId, entry) {
      return group.run<AppendResult>(entry.orgId, { kind: 'settle', reservationId, entry });
    },
    async release(reservationId) {
      const hold = book.hold(reservationId);
      if (!hold) {
        // Not this server's: a row of its own, made by a server from before shares.
        await query('DELETE FROM reservations WHERE id = $1', [reservationId]);
        return;
      }
      // The credits become the share's spare; a share left with too much gives it back in a write of its own.
      if (book.release(reservationId)) await group.run(hold.orgId, { kind: 'shrink' });
    },
    held() {
      return book.spares(Date.now());
    },
    async reserved(orgId) {
      const [row] = await query<{ total: number }>(
        `SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM reservations WHERE org_id = $1 AND expires_at > ${NOW_MS} AND id <> $2`,
        [orgId, book.rowId(orgId)],
      );
      return row.total + book.open(orgId, Date.now());
    },
    async list(orgId, pageQuery) {
      const before = pageQuery.startingAfter === undefined ? Number.MAX_SAFE_INTEGER : Number(pageQuery.startingAfter);
      const rows = await query<LedgerRow>('SELECT * FROM ledger WHERE org_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3', [
        orgId,
        Number.isFinite(before) ? Math.trunc(before) : 0,
        pageQuery.limit + 1,
      ]);
      return { data: rows.slice(0, pageQuery.limit).map(toEntry), hasMore: rows.length > pageQuery.limit };
    },
    async sum(orgId) {
      const [row] = await query<{ total: number }>('SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM ledger WHERE org_id = $1', [orgId]);
      return row.total;
    },
    async charged(orgId) {
      const [row] = await query<{ credits: string | number; characters: string | number }>(
        "SELECT COALESCE(-SUM(credits), 0)::bigint AS credits, COALESCE(SUM(characters), 0)::bigint AS characters FROM ledger WHERE org_id = $1 AND kind = 'charge'",
        [orgId],
      );
      return { credits: Number(row.credits), characters: Number(row.characters) };
    },
  };

  async function dropShares(): Promise<void> {
    const rows = book.rows().map((share) => share.rowId);
    if (rows.length > 0) await query('DELETE FROM reservations WHERE id = ANY($1)', [rows]);
  }

  return { ledger, dropShares };
}
