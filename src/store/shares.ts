/**
 * @module store/shares
 * Reservations held in this server's memory, each organisation's backed by
 * one row of its own in the `reservations` table: the server's share. The
 * share's row always covers every hold this server has open for that
 * organisation, plus some spare, so every other server on the same database
 * counts them when it checks a balance, and a hold that fits into the spare is
 * granted with no write at all. Only a hold that does not fit goes to the
 * database, where the rule is the one every store applies: granted while
 * balance − (other rows + this server's open holds) > 0. The spare is carved
 * out of what is left after the hold, never more than a quarter of it, so it
 * never takes a balance to zero and never causes an overshoot; the bound stays
 * one request's cost. It is sized for 16 more holds like the last, or for the
 * outage credit if more: what the server may go on admitting on while the
 * database is away (`OUTAGE_SPARE_CREDITS`).
 *
 * Two ways to use it. A store whose transactions run on this thread (SQLite)
 * decides inside them (`decide`), and every change made inside one is
 * journalled, so a transaction that rolls back leaves the book as it was. A
 * store whose database decides in a call of its own (PostgreSQL) tells the book
 * what it sends (`startDeciding`: no grant from the spare until the answer, as
 * the row the database writes covers only what was sent) and what came back
 * (`decided`). Outside those, releases and lapses only ever shrink what is
 * held, so the row, rewritten later, never covers less than the holds.
 */
import type { Reservation, ReserveResult } from './store.js';

/** The spare a share keeps: room for this many more holds of the size just granted… */
export const SPARE_HOLDS = 16;
/** …but never more than this part (1/n) of what the balance has left after the hold. */
export const SPARE_DIVISOR = 4;
/**
 * The least spare a share keeps for a store outage (`accounts.outageShareCredits` unset): this many
 * credits, or what the organisation was granted on this server in the current and the previous
 * minute if more — so a server can go on admitting it for a minute or more on the credit it holds
 * while the database is away. Still never more than SPARE_DIVISOR's part of what the balance has left.
 */
export const OUTAGE_SPARE_CREDITS = 1000;
/** After a call that failed, how long a share grants from its spare without asking to be resized. */
const RESIZE_RETRY_MS = 5_000;
/** The window of an organisation's recent grants, for the outage spare. */
const SPEND_WINDOW_MS = 60_000;
/** A share's row outlives its newest hold by this fraction of the hold's time, so it is rewritten only now and then. */
const EXPIRY_SLACK = 1 / 4;

export interface Hold {
  id: string;
  orgId: string;
  credits: number;
  expiresAt: number;
}

export interface Share {
  orgId: string;
  /** This share's row id in `reservations`. */
  rowId: string;
  /** Credits of the share's row (written at the end of the transaction that changed it). */
  credits: number;
  /** Expiry of the share's row: never earlier than any of its holds'. */
  expiresAt: number;
  /** Credits the share keeps beyond its open holds. */
  spare: number;
  /** Σ credits of the open holds. */
  open: number;
  holds: Map<string, Hold>;
  /** The earliest expiry among the holds (a sweep before then finds nothing). */
  nextLapse: number;
  /** What the database said last: the balance, and the other rows' credits. */
  balance: number;
  others: number;
  /** A database that decides asynchronously is deciding holds of this share: nothing is granted from the spare meanwhile. */
  deciding: boolean;
  /** Credits of the share's row as the database last wrote it. */
  written: number;
  /** The spare the last decision wanted was cut to what the balance allows (a bigger one cannot be had). */
  capped: boolean;
  /** No resize is asked for before this (epoch ms): the last call failed, the database may be away. */
  resizeAfter: number;
  /** Credits granted in the current window (since `windowStart`) and in the one before it. */
  granted: { windowStart: number; current: number; previous: number };
}

/** What `startDeciding` sent the database, to be matched with its answer in `decided`. */
export interface Decision {
  /** The share's open holds, without those the same call settles. */
  open: number;
  /** Each hold's expiry, if granted. */
  expires: number[];
  /** The share row's expiry if the call writes it. */
  shareExpires: number;
  /** How many holds of the smallest request's size the spare is asked to be (`spareHolds`). */
  spareHolds: number;
}

/** The database's answer to a `Decision`. */
export interface DecisionAnswer {
  granted: boolean[];
  /** What each hold saw before it: the other rows and the open holds. */
  reserved: number[];
  balance: number;
  others: number;
  /** The share's row as written. */
  credits: number;
}

/** What a reservation asks for. */
export interface HoldRequest {
  id: string;
  orgId: string;
  credits: number;
  ttlMs: number;
}

function toReservation(hold: Hold): Reservation {
  return { id: hold.id, orgId: hold.orgId, credits: hold.credits, expiresAt: hold.expiresAt };
}

export class ShareBook {
  private readonly shares = new Map<string, Share>();
  private readonly holds = new Map<string, Hold>();
  /** Undo steps of the transaction in progress, newest last; null outside one. */
  private journal: (() => void)[] | null = null;
  /** Shares whose row must be written before the transaction in progress commits. */
  private readonly dirty = new Set<Share>();

  /**
   * `instance` makes this process's row ids its own. `outageCredits`: the least spare a share keeps
   * (`accounts.outageShareCredits`); null: OUTAGE_SPARE_CREDITS or a minute of the organisation's grants.
   */
  constructor(
    private readonly instance: string,
    private readonly outageCredits: number | null = null,
  ) {}

  /** The least spare the organisation's share keeps, for an outage (capped by the balance where it is applied). */
  outageSpare(orgId: string, now: number): number {
    if (this.outageCredits !== null) return this.outageCredits;
    const share = this.shares.get(orgId);
    if (!share) return OUTAGE_SPARE_CREDITS;
    this.roll(share, now);
    return Math.max(OUTAGE_SPARE_CREDITS, share.granted.current + share.granted.previous);
  }

  /**
   * How many holds of `credits` the spare is sized for, so that it is at least the outage spare: the
   * database's rule is min(left ÷ SPARE_DIVISOR, holds × the last hold granted).
   */
  spareHolds(orgId: string, credits: number, now: number): number {
    return Math.max(SPARE_HOLDS, Math.ceil(this.outageSpare(orgId, now) / Math.max(credits, 1)));
  }

  /** The share of an organisation, as this process knows it (null: it holds nothing for it yet). */
  share(orgId: string): Share | null {
    return this.shares.get(orgId) ?? null;
  }

  /** This process's row id for an organisation's share. */
  rowId(orgId: string): string {
    return `${this.instance}:${orgId}`;
  }

  /** Each organisation's spare as this process holds it now (its share's row beyond its open holds). */
  spares(now: number): { orgId: string; credits: number }[] {
    return this.rows()
      .filter((share) => share.expiresAt > now)
      .map((share) => ({ orgId: share.orgId, credits: Math.max(0, share.credits - share.open) }));
  }

  hold(id: string): Hold | null {
    return this.holds.get(id) ?? null;
  }

  /** Every share that may have a row. */
  rows(): Share[] {
    return [...this.shares.values()].filter((share) => share.credits > 0 || share.written > 0);
  }

  /**
   * A hold granted from the share's spare, without the database; null when it needs the database
   * (no share yet, not enough spare, or the share's row would lapse before the hold).
   */
  grantFromSpare(request: HoldRequest, now: number, resize = true): ReserveResult | null {
    const existing = this.existing(request, now);
    if (existing) return existing;
    const share = this.shares.get(request.orgId);
    if (!share) return null;
    this.sweep(share, now);
    const expiresAt = now + request.ttlMs;
    const spare = share.credits - share.open;
    if (share.deciding || spare <= 0 || spare < request.credits || expiresAt > share.expiresAt) return null;
    // Charges give their credits back to the spare, so under steady traffic the database may never be
    // asked again: once recent grants want twice the spare the last decision set, ask it, to resize.
    if (resize && !share.capped && now >= share.resizeAfter && this.outageSpare(request.orgId, now) > 2 * share.spare) return null;
    const reserved = share.others + share.open;
    this.add(share, this.counted(share, { id: request.id, orgId: request.orgId, credits: request.credits, expiresAt }, now));
    return { ok: true, reservation: toReservation(this.holds.get(request.id)!), balance: share.balance, reserved };
  }

  /** A repeated id holds nothing twice: the hold already open, or null. */
  existing(request: HoldRequest, now: number): ReserveResult | null {
    const hold = this.holds.get(request.id);
    if (!hold) return null;
    if (hold.orgId !== request.orgId) throw new Error(`reservation ${request.id} belongs to another organization`);
    const share = this.shares.get(hold.orgId)!;
    this.sweep(share, now);
    if (!this.holds.has(request.id)) return null;
    return { ok: true, reservation: toReservation(hold), balance: share.balance, reserved: share.others + share.open - hold.credits };
  }

  /**
   * The database's answer for a hold that did not fit (in a transaction): `balance` and `others`
   * (the organisation's unexpired rows but this share's) as read under the write lock.
   */
  decide(request: HoldRequest, balance: number, others: number, now: number): ReserveResult {
    const share = this.ensure(request.orgId, now);
    this.sweep(share, now);
    this.remember(share);
    share.balance = balance;
    share.others = others;
    const reserved = others + share.open;
    if (balance - reserved <= 0) {
      // Nothing is left to keep spare of: the others may have what this share still holds beyond its holds.
      share.spare = 0;
      if (this.trim(share)) this.markDirty(share);
      return { ok: false, balance, reserved };
    }
    const hold: Hold = { id: request.id, orgId: request.orgId, credits: request.credits, expiresAt: now + request.ttlMs };
    this.add(share, this.counted(share, hold, now));
    const left = balance - reserved - request.credits;
    const wanted = this.spareHolds(request.orgId, request.credits, now) * Math.max(request.credits, 1);
    share.spare = Math.max(0, Math.min(Math.floor(left / SPARE_DIVISOR), wanted));
    share.capped = share.spare < wanted;
    share.credits = share.open + share.spare;
    share.expiresAt = Math.max(share.expiresAt, now + Math.ceil(request.ttlMs * (1 + EXPIRY_SLACK)));
    this.markDirty(share);
    return { ok: true, reservation: toReservation(hold), balance, reserved };
  }

  /**
   * A hold charged (in a transaction): it leaves the share, and its credits stay in the row as
   * spare until the row has more than twice its spare, so most charges rewrite no share. Returns
   * false when this process holds no such hold for the organisation.
   */
  settle(id: string, orgId: string, balance: number): boolean {
    const share = this.shares.get(orgId);
    if (share) {
      this.remember(share);
      share.balance = balance;
    }
    const hold = this.holds.get(id);
    if (!hold || hold.orgId !== orgId || !share) return false;
    this.remove(share, hold);
    if (this.trim(share)) this.markDirty(share);
    return true;
  }

  /**
   * A hold dropped without a charge (outside a transaction). Its credits become spare; returns
   * true when the share now keeps more spare than it should, and its row wants shrinking.
   */
  release(id: string): boolean {
    const hold = this.holds.get(id);
    if (!hold) return false;
    const share = this.shares.get(hold.orgId)!;
    this.remove(share, hold);
    return share.credits - share.open > 2 * share.spare;
  }

  /** Shrinks a share's row to its open holds and its spare (in a transaction). */
  shrink(orgId: string, now: number): void {
    const share = this.shares.get(orgId);
    if (!share) return;
    this.remember(share);
    this.sweep(share, now);
    if (this.trim(share)) this.markDirty(share);
  }

  /** Σ credits of the open holds of an organisation. */
  open(orgId: string, now: number): number {
    const share = this.shares.get(orgId);
    if (!share) return 0;
    this.sweep(share, now);
    return share.open;
  }

  // --- a database that decides asynchronously (PostgreSQL) ---------------------------------

  /**
   * A call that decides `requests` is about to be sent; `settling` are the hold ids the same call
   * charges (they leave before the decisions). Until `decided` or `undecided`, no hold of the
   * organisation is granted from the spare: the row the database writes covers only what was sent.
   */
  startDeciding(orgId: string, requests: HoldRequest[], settling: string[], now: number): Decision {
    const share = this.ensure(orgId, now);
    this.sweep(share, now);
    share.deciding = true;
    let open = share.open;
    for (const id of settling) {
      const hold = share.holds.get(id);
      if (hold) open -= hold.credits;
    }
    const longest = Math.max(...requests.map((r) => r.ttlMs));
    return {
      open,
      spareHolds: this.spareHolds(orgId, Math.min(...requests.map((r) => r.credits)), now),
      expires: requests.map((r) => now + r.ttlMs),
      shareExpires: Math.max(share.expiresAt, now + Math.ceil(longest * (1 + EXPIRY_SLACK))),
    };
  }

  /** The database decided: granted holds are added, and the share is the row it wrote. */
  decided(orgId: string, requests: HoldRequest[], sent: Decision, answer: DecisionAnswer): ReserveResult[] {
    const share = this.shares.get(orgId)!;
    share.deciding = false;
    share.balance = answer.balance;
    share.others = answer.others;
    let granted = 0;
    const results = requests.map((request, i): ReserveResult => {
      const reserved = answer.reserved[i];
      if (!answer.granted[i]) return { ok: false, balance: answer.balance, reserved };
      const hold: Hold = { id: request.id, orgId, credits: request.credits, expiresAt: sent.expires[i] };
      this.add(share, this.counted(share, hold, Date.now()));
      granted += request.credits;
      return { ok: true, reservation: toReservation(hold), balance: answer.balance, reserved };
    });
    share.credits = answer.credits;
    share.written = answer.credits;
    share.expiresAt = sent.shareExpires;
    share.spare = Math.max(0, answer.credits - sent.open - granted);
    // What the call asked for (`spareHolds` of its smallest hold), against what the balance allowed.
    share.capped = share.spare < sent.spareHolds * Math.max(Math.min(...requests.map((r) => r.credits)), 1);
    return results;
  }

  /** The call failed or found no organisation: nothing was decided (and no resize is asked for a while). */
  undecided(orgId: string): void {
    const share = this.shares.get(orgId);
    if (!share) return;
    share.deciding = false;
    share.resizeAfter = Date.now() + RESIZE_RETRY_MS;
  }

  /** The credits a shrinking share's row should now hold, or null when the row needs no write. */
  shrinkTo(orgId: string, now: number): number | null {
    const share = this.shares.get(orgId);
    if (!share) return null;
    this.sweep(share, now);
    this.trim(share);
    return share.credits < share.written ? share.credits : null;
  }

  /** The database wrote the share's row with `credits`. */
  wrote(orgId: string, credits: number): void {
    const share = this.shares.get(orgId);
    if (share) share.written = credits;
  }

  /** True when the share holds less than its row says: the row wants shrinking. */
  unwritten(orgId: string): boolean {
    const share = this.shares.get(orgId);
    return share !== undefined && share.credits < share.written;
  }

  // --- transactions -------------------------------------------------------------------------

  /** Starts journalling: called as a ledger transaction begins. */
  begin(): void {
    this.journal = [];
    this.dirty.clear();
  }

  /** A point to roll back to (an op's savepoint). */
  mark(): number {
    return this.journal?.length ?? 0;
  }

  /** Undoes everything since `mark` (the op's savepoint rolled back). */
  rollbackTo(mark: number): void {
    const journal = this.journal;
    if (!journal) return;
    // Undoing journals nothing itself.
    this.journal = null;
    try {
      while (journal.length > mark) journal.pop()!();
    } finally {
      this.journal = journal;
    }
  }

  /** The shares whose rows this transaction must write, with their new values. */
  changed(): Share[] {
    return [...this.dirty];
  }

  /** The transaction committed: its changes stand. */
  commit(): void {
    this.journal = null;
    this.dirty.clear();
  }

  /** The transaction rolled back: the book is as it was before `begin`. */
  rollback(): void {
    this.rollbackTo(0);
    this.journal = null;
    this.dirty.clear();
  }

  // --- internals ----------------------------------------------------------------------------

  private ensure(orgId: string, now: number): Share {
    let share = this.shares.get(orgId);
    if (!share) {
      share = { orgId, rowId: this.rowId(orgId), credits: 0, expiresAt: 0, spare: 0, open: 0, holds: new Map(), nextLapse: Infinity, balance: 0, others: 0, deciding: false, written: 0, capped: false, resizeAfter: 0, granted: { windowStart: now, current: 0, previous: 0 } };
      this.shares.set(orgId, share);
      const created = share;
      this.journal?.push(() => {
        if (created.holds.size === 0) this.shares.delete(orgId);
      });
    }
    // A share whose row has lapsed holds nothing any more (its holds lapsed before it).
    if (share.expiresAt <= now && share.credits > 0) {
      this.remember(share);
      share.credits = 0;
      share.spare = 0;
    }
    return share;
  }

  /** The share's row must be written by the transaction in progress (none outside one). */
  private markDirty(share: Share): void {
    if (this.journal) this.dirty.add(share);
  }

  /** Journals the share's numbers, so a rollback restores them. */
  private remember(share: Share): void {
    if (!this.journal) return;
    const { credits, expiresAt, spare, balance, others, capped } = share;
    this.journal.push(() => Object.assign(share, { credits, expiresAt, spare, balance, others, capped }));
  }

  /** Moves the grant window on: a window older than two is forgotten. */
  private roll(share: Share, now: number): void {
    const windows = Math.floor((now - share.granted.windowStart) / SPEND_WINDOW_MS);
    if (windows <= 0) return;
    share.granted.previous = windows === 1 ? share.granted.current : 0;
    share.granted.current = 0;
    share.granted.windowStart += windows * SPEND_WINDOW_MS;
  }

  /** A hold granted: recent grants size the outage spare (one rolled back still counts: it was asked for). */
  private counted(share: Share, hold: Hold, now: number): Hold {
    this.roll(share, now);
    share.granted.current += hold.credits;
    return hold;
  }

  private add(share: Share, hold: Hold): void {
    share.holds.set(hold.id, hold);
    this.holds.set(hold.id, hold);
    share.open += hold.credits;
    if (hold.expiresAt < share.nextLapse) share.nextLapse = hold.expiresAt;
    this.journal?.push(() => this.remove(share, hold));
  }

  private remove(share: Share, hold: Hold): void {
    if (share.holds.get(hold.id) !== hold) return;
    share.holds.delete(hold.id);
    this.holds.delete(hold.id);
    share.open -= hold.credits;
    this.journal?.push(() => this.add(share, hold));
  }

  /** Lapsed holds stop counting; their credits stay in the row as spare until it is next written. */
  private sweep(share: Share, now: number): void {
    if (now < share.nextLapse) return;
    let next = Infinity;
    for (const hold of share.holds.values()) {
      if (hold.expiresAt <= now) this.remove(share, hold);
      else if (hold.expiresAt < next) next = hold.expiresAt;
    }
    share.nextLapse = next;
  }

  /** Keeps at most twice the spare beyond the open holds; true when the row shrank. */
  private trim(share: Share): boolean {
    if (share.credits - share.open <= 2 * share.spare) return false;
    share.credits = share.open + share.spare;
    return true;
  }
}
