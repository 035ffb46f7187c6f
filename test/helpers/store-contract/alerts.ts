/**
 * @module test/helpers/store-contract/alerts
 * The `AlertRepository` contract, whatever database is under it: usage alerts
 * and their events, which fire once per alert, threshold and period however
 * many servers race, and are claimed for delivery one caller at a time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store, UsageAlert } from '../../../src/store/store.js';
import { credit, uid, T, type Subject } from './common.js';

export function alertsContract(subject: Subject): void {
  const alertOf = async (orgId: string, extra: Partial<UsageAlert> = {}) =>
    subject.store.alerts.create({
      id: uid('alert'),
      orgId,
      keyId: null,
      url: 'https://hooks.example.com/usage?token=t',
      budgetPercent: null,
      balanceBelow: [1000, 100],
      createdAt: new Date().toISOString(),
      ...extra,
    });
  const event = (alert: UsageAlert, threshold: string, period: string) => ({
    id: uid('alev'),
    alertId: alert.id,
    orgId: alert.orgId,
    threshold,
    period,
    body: JSON.stringify({ threshold }),
    createdAt: new Date().toISOString(),
  });

  test('alerts: create, get, list, delete with their events', T, async () => {
    const orgId = await subject.org();
    const first = await alertOf(orgId);
    const second = await alertOf(orgId, { keyId: uid('key'), budgetPercent: [50, 80, 100], balanceBelow: null, createdAt: new Date(Date.now() + 1).toISOString() });
    assert.deepEqual(await subject.store.alerts.get(first.id), first);
    assert.deepEqual(second.budgetPercent, [50, 80, 100]);
    assert.deepEqual(first.balanceBelow, [1000, 100]);
    assert.deepEqual((await subject.store.alerts.list(orgId)).map((a) => a.id), [first.id, second.id]);
    assert.equal(await subject.store.alerts.fire(event(first, 'balance:1000', 'credit:1'), Date.now()), true);
    assert.equal(await subject.store.alerts.delete(first.id), true);
    assert.equal(await subject.store.alerts.delete(first.id), false);
    assert.equal(await subject.store.alerts.get(first.id), null);
    assert.deepEqual(await subject.store.alerts.events(first.id, 10), []);
  });

  test('alerts: a threshold fires once per period, however many servers race', T, async () => {
    const orgId = await subject.org();
    const alert = await alertOf(orgId);
    const other = await subject.opened.another();
    try {
      const fired = await Promise.all([subject.store, other].flatMap((on: Store) => Array.from({ length: 10 }, () => on.alerts.fire(event(alert, 'balance:1000', 'credit:7'), Date.now()))));
      assert.equal(fired.filter(Boolean).length, 1);
      // Another threshold, or the same one in another period, fires again.
      assert.equal(await subject.store.alerts.fire(event(alert, 'balance:100', 'credit:7'), Date.now()), true);
      assert.equal(await other.alerts.fire(event(alert, 'balance:1000', 'credit:9'), Date.now()), true);
      const events = await subject.store.alerts.events(alert.id, 10);
      assert.equal(events.length, 3);
      assert.ok(events.every((e) => e.state === 'pending' && e.attempts === 0 && e.orgId === orgId));
    } finally {
      await other.close();
    }
  });

  test('alerts: a due event is claimed by one caller at a time, pushed ahead while in flight; outcomes recorded', T, async () => {
    const orgId = await subject.org();
    const alert = await alertOf(orgId);
    const now = Date.now();
    // Events of other tests may be due too: claims are told apart by this alert's id.
    assert.equal(await subject.store.alerts.fire(event(alert, 'balance:1000', 'credit:1'), now), true);
    const claims = [];
    for (;;) {
      const claimed = await subject.store.alerts.claim(now, 60_000);
      if (!claimed) break;
      claims.push(claimed);
    }
    const mine = claims.filter((c) => c.alertId === alert.id);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].nextAt, now + 60_000);
    await subject.store.alerts.attempted(mine[0].id, { state: 'pending', attempts: 1, nextAt: now + 5 });
    assert.equal((await subject.store.alerts.claim(now + 5, 1000))?.id, mine[0].id);
    await subject.store.alerts.attempted(mine[0].id, { state: 'delivered', attempts: 2, nextAt: null });
    assert.equal(await subject.store.alerts.claim(now + 10_000_000, 1000).then((c) => c?.alertId === alert.id), false);
    const [stored] = await subject.store.alerts.events(alert.id, 1);
    assert.deepEqual({ state: stored.state, attempts: stored.attempts, nextAt: stored.nextAt }, { state: 'delivered', attempts: 2, nextAt: null });
  });

  test('alerts: lastCredit is the newest credit row of the organisation', T, async () => {
    const orgId = await subject.org();
    assert.equal(await subject.store.alerts.lastCredit(orgId), 0);
    const { entry } = await subject.store.ledger.append(credit(orgId, 10));
    assert.equal(await subject.store.alerts.lastCredit(orgId), entry.id);
  });
}
