/**
 * @module test/helpers/store-contract/budgets
 * The key-budget side of `LedgerRepository.reserve` and `UsageRepository.spent`, whatever database
 * is under it: a reservation with a budget is granted while the budget − (what the key was charged
 * since the period began + its open budget holds) > 0, and by the organisation's own rule; its
 * holds are rows every server counts; charges reach `spent` in the transaction that writes them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BudgetHold, Store } from '../../../src/store/store.js';
import { charge, uid, T, type Subject } from './common.js';

const HOUR = 3_600_000;
const hourStart = (at: number) => new Date(Math.floor(at / HOUR) * HOUR).toISOString();

export function budgetsContract(subject: Subject): void {
  const keyOf = async (orgId: string) => {
    const id = uid('key');
    await subject.store.keys.create({ id, orgId, name: null, secretHash: 'ab'.repeat(32), createdAt: new Date().toISOString() });
    return id;
  };
  const hold = (on: Store, orgId: string, budget: BudgetHold, credits: number, id = `req_${uid('b')}/0`) =>
    on.ledger.reserve({ id, orgId, credits, ttlMs: 60_000, budget }).then((result) => ({ id, result }));

  test('budget holds: granted while budget − (spent + held) > 0; charges count as spent, releases free the budget', T, async () => {
    const orgId = await subject.org(10_000);
    const keyId = await keyOf(orgId);
    const budget: BudgetHold = { keyId, credits: 50, since: hourStart(Date.now()) };
    const a = await hold(subject.store, orgId, budget, 20);
    const b = await hold(subject.store, orgId, budget, 20);
    const c = await hold(subject.store, orgId, budget, 20);
    for (const granted of [a, b, c]) assert.equal(granted.result.ok, true);
    // 50 − 60 ≤ 0: refused by the budget, which says what it counted.
    const d = await hold(subject.store, orgId, budget, 20);
    assert.deepEqual(d.result, { ok: false, balance: 10_000, reserved: 60, budget: { spent: 0, reserved: 60 } });
    // A repeated id holds nothing twice.
    assert.equal((await hold(subject.store, orgId, budget, 20, a.id)).result.ok, true);
    assert.equal(await subject.store.ledger.reserved(orgId), 60);

    await subject.store.ledger.settle(a.id, charge(orgId, 20, a.id, { keyId }));
    await subject.store.ledger.release(b.id);
    await subject.store.ledger.release(c.id);
    assert.equal(await subject.store.usage.spent(keyId, budget.since), 20);
    assert.equal(await subject.store.ledger.reserved(orgId), 0);
    const e = await hold(subject.store, orgId, budget, 25);
    assert.equal(e.result.ok, true);
    // 50 − (20 + 25) > 0: one more; then 50 − 70 ≤ 0.
    assert.equal((await hold(subject.store, orgId, budget, 25)).result.ok, true);
    const refused = await hold(subject.store, orgId, budget, 1);
    assert.equal(refused.result.ok, false);
    assert.deepEqual(!refused.result.ok && refused.result.budget, { spent: 20, reserved: 50 });
  });

  test("budget holds: a period that began after the key's charges starts from nothing; other keys are apart", T, async () => {
    const orgId = await subject.org(10_000);
    const keyId = await keyOf(orgId);
    const other = await keyOf(orgId);
    const now = Date.now();
    const first = await hold(subject.store, orgId, { keyId, credits: 30, since: hourStart(now) }, 30);
    await subject.store.ledger.settle(first.id, charge(orgId, 30, first.id, { keyId }));
    assert.equal((await hold(subject.store, orgId, { keyId, credits: 30, since: hourStart(now) }, 1)).result.ok, false);
    // The clock moves on: the next hour's period has spent nothing.
    const next = hourStart(now + HOUR);
    assert.equal(await subject.store.usage.spent(keyId, next), 0);
    assert.equal((await hold(subject.store, orgId, { keyId, credits: 30, since: next }, 30)).result.ok, true);
    assert.equal((await hold(subject.store, orgId, { keyId: other, credits: 30, since: hourStart(now) }, 30)).result.ok, true);
    assert.equal(await subject.store.usage.spent(other, hourStart(now)), 0);
  });

  test("budget holds: the organisation's rule still applies, and budget holds count against its balance", T, async () => {
    const orgId = await subject.org(100);
    const keyId = await keyOf(orgId);
    const budget: BudgetHold = { keyId, credits: 1_000_000, since: hourStart(Date.now()) };
    assert.equal((await hold(subject.store, orgId, budget, 80)).result.ok, true);
    // Without a budget: 100 − 80 > 0, granted; then nothing is left.
    assert.equal((await subject.store.ledger.reserve({ id: `req_${uid('n')}/0`, orgId, credits: 30, ttlMs: 60_000 })).ok, true);
    const refused = await hold(subject.store, orgId, budget, 1);
    assert.equal(refused.result.ok, false);
    assert.equal(!refused.result.ok && refused.result.budget, undefined, 'refused by the balance, not the budget');
    assert.equal((await subject.store.ledger.reserve({ id: `req_${uid('n')}/0`, orgId, credits: 1, ttlMs: 60_000 })).ok, false);
  });

  test('budget holds: racing on two servers overshoot the budget by less than one hold, and each charge counts once', T, async () => {
    const orgId = await subject.org(1_000_000);
    const keyId = await keyOf(orgId);
    const other = await subject.opened.another();
    try {
      const budget: BudgetHold = { keyId, credits: 200, since: hourStart(Date.now()) };
      const racing = await Promise.all([subject.store, other].flatMap((on) => Array.from({ length: 30 }, () => hold(on, orgId, budget, 20).then((h) => ({ on, ...h })))));
      const granted = racing.filter((r) => r.result.ok);
      const held = 20 * granted.length;
      assert.ok(held >= 200 && held < 200 + 20, `${held} credits held against a budget of 200`);
      // Each charged twice over (a retry): counted once.
      await Promise.all(granted.flatMap(({ on, id }) => [on.ledger.settle(id, charge(orgId, 20, id, { keyId })), on.ledger.settle(id, charge(orgId, 20, id, { keyId }))]));
      assert.equal(await subject.store.usage.spent(keyId, budget.since), held);
      assert.equal(await other.usage.spent(keyId, budget.since), held);
      assert.equal(await subject.balance(orgId), 1_000_000 - held);
      assert.equal((await hold(other, orgId, budget, 1)).result.ok, false);
    } finally {
      await other.close();
    }
  });
}
