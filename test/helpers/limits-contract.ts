/**
 * @module test/helpers/limits-contract
 * The contract every set of limit counters keeps: a concurrency cap that
 * holds under a burst, idempotent release, a sliding rate window with a
 * truthful retry-after; for shared counters also one set of limits across
 * instances, leases that live while renewed and lapse when their holder
 * stops, and a quick `limits_unavailable` when the backing service is gone.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.js';
import type { Lease, LimitCounters } from '../../src/limits/counters.js';
import { eventually } from './redis.js';

export interface LimitsSubject {
  /** Opens a counter instance; for shared counters, every instance of one subject shares the same counts. */
  open(options?: { leaseTtlMs?: number }): Promise<LimitCounters>;
  /** True when instances share counts and leases lapse unless renewed (Redis). */
  shared: boolean;
  /** Counters whose backing service cannot be reached (shared counters only). */
  unreachable?(): Promise<LimitCounters>;
  /** True when unreachable counters fall back to counting locally rather than refusing. */
  fallsBack?: boolean;
  /** Closes every instance opened and removes whatever the subject left behind. */
  dispose(): Promise<void>;
}

const id = (kind: string) => `${kind}_${randomBytes(6).toString('hex')}`;

async function withSubject(open: () => Promise<LimitsSubject>, body: (subject: LimitsSubject) => Promise<void>): Promise<void> {
  const subject = await open();
  try {
    await body(subject);
  } finally {
    await subject.dispose();
  }
}

async function expectUnavailable(operation: () => Promise<unknown>, name: string): Promise<void> {
  const started = performance.now();
  await assert.rejects(operation(), (err: unknown) => {
    assert.ok(err instanceof ApiError, `${name}: ${String(err)}`);
    assert.equal(err.code, 'limits_unavailable');
    assert.equal(err.status, 503);
    assert.equal(err.headers['retry-after'], '1');
    return true;
  });
  const took = performance.now() - started;
  assert.ok(took < 2500, `${name} took ${Math.round(took)} ms`);
}

/**
 * `shared`: the counters are shared between instances through a service (Redis). The checks that
 * only such counters can pass (one set of limits across instances, leases that outlive a holder,
 * an unreachable service) are defined for them alone; `open` must report the same.
 */
export function limitsContract(name: string, open: () => Promise<LimitsSubject>, options: { shared: boolean }): void {
  const sharedTest = options.shared ? test : () => {};
  describe(`limit counters contract: ${name}`, () => {
    test('the cap holds under 50 concurrent acquires, per organisation', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        const limits = await subject.open();
        const org = id('org');
        const other = id('org');
        const leases = await Promise.all(Array.from({ length: 50 }, () => limits.acquire(org, 5)));
        const held = leases.filter((l): l is Lease => l !== null);
        assert.equal(held.length, 5);
        assert.equal(await limits.active(org), 5);
        assert.equal(await limits.acquire(org, 5), null, 'still full');
        const elsewhere = await limits.acquire(other, 1);
        assert.ok(elsewhere, 'another organisation has its own slots');
        assert.equal(await limits.active(other), 1);
        await Promise.all(held.map((l) => l.release()));
        await elsewhere.release();
        assert.equal(await limits.active(org), 0);
        assert.equal(await limits.active(other), 0);
        assert.ok(await limits.acquire(org, 1), 'free again');
      }),
    );

    test('release is idempotent: a second release frees nobody else’s slot', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        const limits = await subject.open();
        const org = id('org');
        const first = await limits.acquire(org, 2);
        const second = await limits.acquire(org, 2);
        assert.ok(first && second);
        await Promise.all([first.release(), first.release()]);
        await first.release();
        assert.equal(await limits.active(org), 1, 'only the first slot was freed');
        const third = await limits.acquire(org, 2);
        assert.ok(third, 'the freed slot can be taken');
        assert.equal(await limits.acquire(org, 2), null);
        await second.release();
        await third.release();
        assert.equal(await limits.active(org), 0);
      }),
    );

    test('a rate window allows N, refuses with a truthful retryAfterMs, then allows again', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        const limits = await subject.open();
        const key = id('key');
        const started = performance.now();
        for (let i = 0; i < 3; i++) assert.deepEqual(await limits.consume(key, 3, 1), { allowed: true }, `request ${i + 1}`);
        const refused = await limits.consume(key, 3, 1);
        assert.equal(refused.allowed, false);
        const retryAfterMs = (refused as { retryAfterMs: number }).retryAfterMs;
        const elapsed = performance.now() - started;
        assert.ok(Number.isInteger(retryAfterMs) && retryAfterMs >= 1 && retryAfterMs <= 1000, String(retryAfterMs));
        assert.ok(Math.abs(elapsed + retryAfterMs - 1000) < 200, `retry after ${retryAfterMs} ms, ${Math.round(elapsed)} ms after the first`);
        assert.deepEqual(await limits.consume(id('key'), 3, 1), { allowed: true }, 'another key has its own window');

        // Refused attempts are not counted, so the window frees once the first request leaves it.
        let allowedAt = 0;
        const again = await eventually(
          async () => {
            const decision = await limits.consume(key, 3, 1);
            if (decision.allowed) allowedAt = performance.now();
            return decision.allowed;
          },
          3000,
          25,
        );
        assert.ok(again, 'allowed again after the window');
        assert.ok(allowedAt - started >= 950, `allowed again after ${Math.round(allowedAt - started)} ms`);
      }),
    );

    test('after a limit is lowered, retryAfterMs waits for enough entries to leave the window', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        const limits = await subject.open();
        const key = id('key');
        for (let i = 0; i < 3; i++) {
          if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
          assert.equal((await limits.consume(key, 3, 1)).allowed, true);
        }
        // Now 1 per second: all three entries must leave, the newest about 1000 ms from now, not the oldest at ~600.
        const refused = await limits.consume(key, 1, 1);
        assert.equal(refused.allowed, false);
        const retryAfterMs = (refused as { retryAfterMs: number }).retryAfterMs;
        assert.ok(retryAfterMs > 850 && retryAfterMs <= 1000, String(retryAfterMs));
      }),
    );

    sharedTest('two instances enforce one set of limits for the organisation', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        assert.ok(subject.shared, 'declared shared');
        const [a, b] = [await subject.open(), await subject.open()];
        const org = id('org');
        const leases = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).acquire(org, 5)));
        const held = leases.filter((l): l is Lease => l !== null);
        assert.equal(held.length, 5, 'five slots in all, not five per instance');
        assert.equal(await a.active(org), 5);
        assert.equal(await b.active(org), 5);
        await held[0].release();
        assert.ok(await b.acquire(org, 5), 'a slot freed on one instance can be taken on the other');

        const key = id('key');
        assert.equal((await a.consume(key, 4, 60)).allowed, true);
        assert.equal((await b.consume(key, 4, 60)).allowed, true);
        assert.equal((await a.consume(key, 4, 60)).allowed, true);
        assert.equal((await b.consume(key, 4, 60)).allowed, true);
        assert.equal((await a.consume(key, 4, 60)).allowed, false, 'four in all');
        assert.equal((await b.consume(key, 4, 60)).allowed, false, 'four in all');
      }),
    );

    sharedTest('a lease lives while its holder renews it and comes back within the TTL once the holder stops', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        assert.ok(subject.shared, 'declared shared');
        const holder = await subject.open({ leaseTtlMs: 1000 });
        const other = await subject.open();
        const org = id('org');
        // A live server holds one slot of two; the holder about to stop holds the other.
        const live = await other.acquire(org, 2);
        assert.ok(live && (await holder.acquire(org, 2)));
        // Held for 2.5 TTLs: renewal keeps the slot taken the whole time.
        const until = performance.now() + 2500;
        while (performance.now() < until) {
          assert.equal(await other.active(org), 2, 'the renewed lease is still counted');
          assert.equal(await other.acquire(org, 2), null);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // The holder stops without releasing, as a crashed server would.
        await holder.close();
        const stopped = performance.now();
        let lease: Lease | null = null;
        assert.ok(await eventually(async () => (lease = await other.acquire(org, 2)) !== null, 3000, 25), 'the slot came back');
        const took = performance.now() - stopped;
        assert.ok(took <= 1000 + 250, `the slot came back ${Math.round(took)} ms after its holder stopped`);
        assert.equal(await other.active(org), 2, 'the live lease was kept');
        await (lease as Lease | null)?.release();
        await live.release();
      }),
    );

    sharedTest('unreachable counters fail quickly with limits_unavailable, or fall back to counting locally', { timeout: 20_000 }, () =>
      withSubject(open, async (subject) => {
        assert.ok(subject.unreachable, 'shared counters can be given an unreachable service');
        const limits = await subject.unreachable();
        if (subject.fallsBack) {
          // Never reached: this instance counts itself alone, so the whole limit is its own.
          const org = id('org');
          const started = performance.now();
          const first = await limits.acquire(org, 2);
          assert.ok(performance.now() - started < 2500, `fell back in ${Math.round(performance.now() - started)} ms`);
          assert.equal(limits.status?.().state, 'degraded');
          const second = await limits.acquire(org, 2);
          assert.ok(first && second, 'two slots of two');
          assert.equal(await limits.acquire(org, 2), null, 'the cap holds locally');
          assert.equal(await limits.active(org), 2);
          await first.release();
          await first.release();
          assert.equal(await limits.active(org), 1, 'release is idempotent locally too');
          const key = id('key');
          assert.deepEqual(await limits.consume(key, 2, 60), { allowed: true });
          assert.deepEqual(await limits.consume(key, 2, 60), { allowed: true });
          assert.equal((await limits.consume(key, 2, 60)).allowed, false, 'the rate holds locally');
          await second.release();
          assert.equal(await limits.active(org), 0);
          return;
        }
        await expectUnavailable(() => limits.acquire(id('org'), 1), 'acquire');
        await expectUnavailable(() => limits.consume(id('key'), 1, 1), 'consume');
        await expectUnavailable(() => limits.active(id('org')), 'active');
        await expectUnavailable(() => limits.acquire(id('org'), 1), 'acquire again');
      }),
    );
  });
}
