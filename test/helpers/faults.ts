/**
 * @module test/helpers/faults
 * Fault injection behind the real interfaces: a Store and LimitCounters that
 * wrap real ones and, at a named hook point, wait, throw, or both — switched
 * on and off while a server runs. Each hook counts its calls.
 */
import { InProcessLimits } from '../../src/limits/in-process.js';
import type { LimitCounters } from '../../src/limits/counters.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { storeUnavailable } from '../../src/store/errors.js';
import { tempDataDir } from './server.js';
import { join } from 'node:path';

export interface Fault {
  /** Milliseconds to wait before the call goes through (or fails). */
  delayMs?: number;
  /** Fail this many calls (Infinity: every call) after the delay. */
  fail?: number;
  /** Fail only after the real call has been made (a write that committed but whose answer was lost). */
  failAfterCall?: boolean;
  /** Fail as a store that cannot be reached does (`store_unavailable`), not as a broken call. */
  unavailable?: boolean;
}

export type StoreHook = 'keys.get' | 'orgs.get' | 'ledger.reserve' | 'ledger.settle' | 'ledger.release' | 'ledger.append';
export type LimitsHook = 'acquire' | 'consume' | 'release';

export class Faults<H extends string> {
  private readonly active = new Map<H, Fault>();
  readonly calls = new Map<H, number>();
  /** Calls that have returned or thrown. */
  readonly finished = new Map<H, number>();

  set(hook: H, fault: Fault): void {
    this.active.set(hook, { ...fault });
  }

  clear(): void {
    this.active.clear();
  }

  count(hook: H): number {
    return this.calls.get(hook) ?? 0;
  }

  done(hook: H): number {
    return this.finished.get(hook) ?? 0;
  }

  async around<T>(hook: H, call: () => Promise<T>): Promise<T> {
    try {
      return await this.inject(hook, call);
    } finally {
      this.finished.set(hook, this.done(hook) + 1);
    }
  }

  private async inject<T>(hook: H, call: () => Promise<T>): Promise<T> {
    this.calls.set(hook, this.count(hook) + 1);
    const fault = this.active.get(hook);
    if (!fault) return call();
    if (fault.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    const failing = (fault.fail ?? 0) > 0;
    if (failing) fault.fail! -= 1;
    const failure = (what: string) => (fault.unavailable ? storeUnavailable(new Error(what)) : new Error(what));
    if (failing && !fault.failAfterCall) throw failure(`injected ${hook} failure`);
    const result = await call();
    if (failing) throw failure(`injected ${hook} failure after the call`);
    return result;
  }
}

/** A real SQLite store whose hook points can be made slow or failing. */
export function faultyStore(): { store: Store; faults: Faults<StoreHook> } {
  const real = openSqliteStore(join(tempDataDir(), 'voicegate.sqlite'));
  const faults = new Faults<StoreHook>();
  const wrap = <A extends unknown[], R>(hook: StoreHook, fn: (...args: A) => Promise<R>) => (...args: A) => faults.around(hook, () => fn(...args));
  const store: Store = {
    ...real,
    orgs: { ...real.orgs, get: wrap('orgs.get', real.orgs.get.bind(real.orgs)) },
    keys: { ...real.keys, get: wrap('keys.get', real.keys.get.bind(real.keys)) },
    ledger: {
      ...real.ledger,
      reserve: wrap('ledger.reserve', real.ledger.reserve.bind(real.ledger)),
      settle: wrap('ledger.settle', real.ledger.settle.bind(real.ledger)),
      release: wrap('ledger.release', real.ledger.release.bind(real.ledger)),
      append: wrap('ledger.append', real.ledger.append.bind(real.ledger)),
    },
    close: () => real.close(),
  };
  return { store, faults };
}

/** Real in-process counters whose hook points can be made slow or failing. */
export function faultyLimits(): { limits: LimitCounters; faults: Faults<LimitsHook>; real: InProcessLimits } {
  const real = new InProcessLimits();
  const faults = new Faults<LimitsHook>();
  const limits: LimitCounters = {
    acquire: (orgId, max) =>
      faults.around('acquire', async () => {
        const lease = await real.acquire(orgId, max);
        return lease && { release: () => faults.around('release', () => lease.release()) };
      }),
    consume: (keyId, requests, perSeconds) => faults.around('consume', () => real.consume(keyId, requests, perSeconds)),
    active: (orgId) => real.active(orgId),
    close: () => real.close(),
  };
  return { limits, faults, real };
}
