/**
 * @module test/helpers/store-contract/common
 * What every repository's contract suite shares: the store under test (one
 * opened per backend and run, handed to each suite), a fresh organisation
 * with a balance, and the ledger entries the suites write.
 */
import { randomBytes } from 'node:crypto';
import type { NewLedgerEntry, OrgLimits, RequestFailure, Store } from '../../../src/store/store.js';

/** A row written straight into the database at a chosen time (the rollup's triggers still run; balances do not move). */
export type TimedRow = { at: string } & ({ entry: NewLedgerEntry } | { failure: RequestFailure });

export interface OpenedStore {
  store: Store;
  /** Another server on the same database (its own connection and share of reservations); closed by the test. */
  another(): Promise<Store>;
  /** Writes rows with the `created_at` given, past the store's own clock (summaries and exports over known times). */
  insertAt(rows: TimedRow[]): Promise<void>;
  /** Closes the store and removes what the run created (file, schema). */
  cleanup(): Promise<void>;
}

export const NO_LIMITS: OrgLimits = { maxConcurrent: null, rateLimit: null };
export const T = { timeout: 20_000 };

export function uid(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export function charge(orgId: string, credits: number, chargeKey: string | null, extra: Partial<NewLedgerEntry> = {}): NewLedgerEntry {
  return {
    orgId,
    kind: 'charge',
    credits: -credits,
    keyId: null,
    requestId: chargeKey?.split('/')[0] ?? null,
    chargeKey,
    clientRequestId: null,
    model: 'sonic',
    endpoint: 'tts_bytes',
    characters: credits,
    reason: null,
    ...extra,
  };
}

export function credit(orgId: string, credits: number): NewLedgerEntry {
  return {
    orgId,
    kind: 'credit',
    credits,
    keyId: null,
    requestId: null,
    chargeKey: null,
    clientRequestId: null,
    model: null,
    endpoint: null,
    characters: null,
    reason: 'test credit',
  };
}


/** The store a suite runs against, and the helpers it writes with; `opened` is set before the first test. */
export class Subject {
  opened!: OpenedStore;
  constructor(readonly open: () => Promise<OpenedStore>) {}

  get store(): Store {
    return this.opened.store;
  }

  /** A new organisation with `credits` on its balance. */
  async org(credits = 0): Promise<string> {
    const id = uid('org');
    await this.store.orgs.create({ id, name: 'contract', limits: NO_LIMITS });
    if (credits !== 0) await this.store.ledger.append(credit(id, credits));
    return id;
  }

  async balance(orgId: string): Promise<number> {
    return (await this.store.orgs.get(orgId))!.balance;
  }
}
