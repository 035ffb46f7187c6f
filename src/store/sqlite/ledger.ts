/**
 * @module store/sqlite/ledger
 * The ledger in SQLite (`LedgerRepository`): this process's reservations in
 * memory, backed by one share row per organisation (../shares.ts), most
 * granted from its spare with no write; charges, and the reservations the
 * spare cannot grant, share group commits (group-commit.ts) of the ledger's
 * write transactions (ledger-writes.ts). A charge is reported once on disk.
 */
import { randomBytes } from 'node:crypto';
import { checkReserveRequest } from '../checks.js';
import { toEntry } from '../ledger-row.js';
import { ShareBook } from '../shares.js';
import type { AppendResult, LedgerEntry, LedgerRepository, Page, PageQuery, ReserveResult } from '../store.js';
import { classifyWriteError, guard, type SqliteContext } from './context.js';
import { GroupCommit } from './group-commit.js';
import { prepareLedgerWrites, type LedgerOp, type LedgerRow } from './ledger-writes.js';

/** The repository, and what the store's close does with it: its shares are dropped, for other processes not to wait for them. */
export function sqliteLedger({ db, durable, flushed }: SqliteContext): { ledger: LedgerRepository; dropShares(): void } {
  const s = {
    reservationDelete: db.prepare('DELETE FROM reservations WHERE id = ?'),
    ledgerPage: db.prepare('SELECT * FROM ledger WHERE org_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    ledgerSum: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM ledger WHERE org_id = ?'),
    ledgerCharged: db.prepare("SELECT COALESCE(-SUM(credits), 0) AS credits, COALESCE(SUM(characters), 0) AS characters FROM ledger WHERE org_id = ? AND kind = 'charge'"),
  };

  // This process's reservations: in memory, backed by one row per organisation (shares.ts).
  const book = new ShareBook(`share_${randomBytes(8).toString('hex')}`);
  const writes = prepareLedgerWrites(db, book);

  // Reservations and charges of concurrent requests share commits (see group-commit.ts).
  // A charge is reported once on disk; a reservation once committed (a power cut ends its request too).
  const group = new GroupCommit<LedgerOp>(writes.batch, classifyWriteError, { needs: (op) => op.kind === 'settle', sync: flushed });
  const ledger: LedgerRepository = {
    async append(entry) {
      return durable(() => guard(() => writes.append.immediate(entry)));
    },
    async reserve(request) {
      checkReserveRequest(request);
      // A key's budget is decided under the write lock, every time: its holds are rows that every process counts.
      const { budget } = request;
      if (budget) return (await group.run({ kind: 'budget', request: { ...request, budget } })) as ReserveResult;
      // Most holds fit into the share's spare: no write, no wait.
      return book.grantFromSpare(request, Date.now()) ?? ((await group.run({ kind: 'reserve', request })) as ReserveResult);
    },
    async settle(reservationId, entry) {
      return (await group.run({ kind: 'settle', reservationId, entry })) as AppendResult;
    },
    async release(reservationId) {
      const hold = book.hold(reservationId);
      if (!hold) {
        // Not this process's: a row of its own, made by a server from before shares.
        guard(() => s.reservationDelete.run(reservationId));
        return;
      }
      // The credits become the share's spare; a share left with too much gives it back in a write of its own.
      if (book.release(reservationId)) await group.run({ kind: 'shrink', orgId: hold.orgId });
    },
    async reserved(orgId) {
      const now = Date.now();
      return writes.othersReserved(orgId, now) + book.open(orgId, now);
    },
    async list(orgId, query: PageQuery): Promise<Page<LedgerEntry>> {
      const before = query.startingAfter === undefined ? Number.MAX_SAFE_INTEGER : Number(query.startingAfter);
      const rows = s.ledgerPage.all(orgId, Number.isFinite(before) ? before : 0, query.limit + 1) as LedgerRow[];
      return { data: rows.slice(0, query.limit).map(toEntry), hasMore: rows.length > query.limit };
    },
    async sum(orgId) {
      return (s.ledgerSum.get(orgId) as { total: number }).total;
    },
    async charged(orgId) {
      return s.ledgerCharged.get(orgId) as { credits: number; characters: number };
    },
  };

  return { ledger, dropShares: () => writes.dropShares() };
}
