/**
 * @module test/helpers/store-contract/ledger
 * The `LedgerRepository` contract, whatever database is under it. The ledger: a balance that always equals the sum of its rows; charge keys that make a retried write apply once; reservations that bound the overdraft however many requests race, on one server or several sharing the database, lapse when they expire and never reach across organisations.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../../../src/store/store.js';
import { until } from '../poll.js';
import { uid, charge, credit, T, type Subject } from './common.js';

export function ledgerContract(subject: Subject): void {
  test('ledger: every row keeps its fields; the balance is the sum of the rows; pages newest first', T, async () => {
    const orgId = await subject.org();
    const first = await subject.store.ledger.append(credit(orgId, 100));
    assert.equal(first.balance, 100);
    assert.equal(first.duplicate, false);
    const entry = charge(orgId, 7, `req_${uid('r')}/0`, { keyId: 'key_1', clientRequestId: 'client-trace-1' });
    const second = await subject.store.ledger.append(entry);
    assert.equal(second.balance, 93);
    assert.deepEqual({ ...second.entry, id: 0, createdAt: '' }, { ...entry, id: 0, createdAt: '' });
    assert.ok(second.entry.id > first.entry.id);
    for (let i = 0; i < 5; i++) await subject.store.ledger.append(charge(orgId, i + 1, null));
    assert.equal(await subject.balance(orgId), 93 - 15);
    assert.equal(await subject.store.ledger.sum(orgId), 93 - 15);
    // What was charged over all time: credits and characters of the charge rows only (the credit is not one).
    const charged = await subject.store.ledger.charged(orgId);
    assert.equal(charged.credits, 15 + 7);
    assert.equal(charged.characters, (await subject.store.ledger.list(orgId, { limit: 100 })).data.filter((e) => e.kind === 'charge').reduce((n, e) => n + (e.characters ?? 0), 0));
    assert.deepEqual(await subject.store.ledger.charged(await subject.org()), { credits: 0, characters: 0 });

    const page1 = await subject.store.ledger.list(orgId, { limit: 4 });
    assert.equal(page1.hasMore, true);
    assert.deepEqual(page1.data.map((e) => e.credits), [-5, -4, -3, -2]);
    const page2 = await subject.store.ledger.list(orgId, { limit: 4, startingAfter: page1.data[3].id });
    assert.equal(page2.hasMore, false);
    assert.deepEqual(page2.data.map((e) => e.credits), [-1, -7, 100]);
    assert.deepEqual(page2.data[1], second.entry);
    await assert.rejects(subject.store.ledger.append(credit(uid('org'), 5)), 'an unknown organisation is refused');
  });

  test('a charge key is written once: a repeated append is a duplicate and writes nothing', T, async () => {
    const orgId = await subject.org(50);
    const key = `req_${uid('r')}/0`;
    const first = await subject.store.ledger.append(charge(orgId, 10, key));
    assert.equal(first.duplicate, false);
    assert.equal(first.balance, 40);
    const second = await subject.store.ledger.append(charge(orgId, 10, key));
    assert.equal(second.duplicate, true);
    assert.deepEqual(second.entry, first.entry);
    assert.equal(second.balance, 40);
    // Rows without a key are all kept.
    await subject.store.ledger.append(charge(orgId, 1, null));
    await subject.store.ledger.append(charge(orgId, 1, null));
    // The balance a duplicate reports is the balance now.
    assert.equal((await subject.store.ledger.append(charge(orgId, 10, key))).balance, 38);
    const rows = (await subject.store.ledger.list(orgId, { limit: 100 })).data;
    assert.equal(rows.filter((r) => r.chargeKey === key).length, 1);
    assert.equal(rows.length, 4);
    assert.equal(await subject.balance(orgId), 38);
    assert.equal(await subject.store.ledger.sum(orgId), 38);
  });

  test('concurrent appends of one charge key write one row', T, async () => {
    const orgId = await subject.org(100);
    const key = `req_${uid('r')}/3`;
    const results = await Promise.all(Array.from({ length: 20 }, () => subject.store.ledger.append(charge(orgId, 9, key))));
    assert.equal(results.filter((r) => !r.duplicate).length, 1);
    assert.ok(results.every((r) => r.entry.id === results[0].entry.id));
    assert.equal(await subject.balance(orgId), 91);
    assert.equal(await subject.store.ledger.sum(orgId), 91);
  });

  test('reservations: granted while balance − reserved > 0, refused otherwise', T, async () => {
    const orgId = await subject.org(10);
    const r = (credits: number) => subject.store.ledger.reserve({ id: uid('res'), orgId, credits, ttlMs: 60_000 });
    const a = await r(5);
    assert.equal(a.ok, true);
    assert.equal(a.balance, 10);
    assert.equal(a.reserved, 0);
    if (a.ok) {
      assert.equal(a.reservation.orgId, orgId);
      assert.equal(a.reservation.credits, 5);
      assert.ok(a.reservation.expiresAt > Date.now() + 50_000 && a.reservation.expiresAt < Date.now() + 70_000);
    }
    assert.deepEqual(await r(4).then((x) => [x.ok, x.reserved]), [true, 5]);
    // 10 − 9 = 1 > 0: one more is granted, even though it overshoots.
    assert.deepEqual(await r(30).then((x) => [x.ok, x.reserved]), [true, 9]);
    const refused = await r(1);
    assert.deepEqual(refused, { ok: false, balance: 10, reserved: 39 });
    assert.equal(await subject.store.ledger.reserved(orgId), 39);
    // Reserving moves no credits.
    assert.equal(await subject.balance(orgId), 10);
    assert.equal(await subject.store.ledger.sum(orgId), 10);

    const empty = await subject.org(0);
    assert.equal((await subject.store.ledger.reserve({ id: uid('res'), orgId: empty, credits: 1, ttlMs: 60_000 })).ok, false);
    const zero = await subject.store.ledger.reserve({ id: uid('res'), orgId: await subject.org(1), credits: 0, ttlMs: 60_000 });
    assert.equal(zero.ok, true, 'a zero-credit hold is granted while the balance is above zero');
    assert.deepEqual(await subject.store.ledger.reserve({ id: uid('res'), orgId: uid('org'), credits: 1, ttlMs: 60_000 }), { ok: false, balance: 0, reserved: 0 });
    await assert.rejects(subject.store.ledger.reserve({ id: uid('res'), orgId, credits: -1, ttlMs: 60_000 }), RangeError);
    await assert.rejects(subject.store.ledger.reserve({ id: uid('res'), orgId, credits: 1.5, ttlMs: 60_000 }), RangeError);
  });

  test('reserving the same id twice holds it once', T, async () => {
    const orgId = await subject.org(10);
    const id = uid('res');
    const first = await subject.store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
    const again = await subject.store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
    assert.equal(first.ok, true);
    assert.equal(again.ok, true);
    assert.equal(await subject.store.ledger.reserved(orgId), 20);
  });

  test('the overshoot is bounded: 50 racing reserve+settle of 20 credits against 10', T, async () => {
    const orgId = await subject.org(10);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const id = `req_${uid('r')}_${i}/0`;
        const held = await subject.store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
        if (!held.ok) return false;
        await subject.store.ledger.settle(id, charge(orgId, 20, id));
        return true;
      }),
    );
    assert.equal(outcomes.filter(Boolean).length, 1, 'only the first is granted');
    const final = await subject.balance(orgId);
    assert.ok(final >= -20, `balance ${final}`);
    assert.equal(final, -10);
    assert.equal(await subject.store.ledger.sum(orgId), final);
    assert.equal(await subject.store.ledger.reserved(orgId), 0);
  });

  test('racing holds are granted exactly while balance − reserved > 0: 50 of 20 credits against 50 gets 3', T, async () => {
    const orgId = await subject.org(50);
    const results = await Promise.all(Array.from({ length: 50 }, () => subject.store.ledger.reserve({ id: uid('res'), orgId, credits: 20, ttlMs: 60_000 })));
    const granted = results.filter((r) => r.ok);
    assert.equal(granted.length, 3);
    // Each grant saw the holds granted before it; every refusal saw all three.
    assert.deepEqual(granted.map((r) => r.reserved).sort((a, b) => a - b), [0, 20, 40]);
    for (const refused of results.filter((r) => !r.ok)) assert.deepEqual(refused, { ok: false, balance: 50, reserved: 60 });
    assert.equal(await subject.store.ledger.reserved(orgId), 60);
  });

  test('concurrent settlement of many requests charges each exactly once', T, async () => {
    const orgId = await subject.org(1000);
    const ids = Array.from({ length: 100 }, (_, i) => `req_${uid('r')}_${i}/0`);
    await Promise.all(
      ids.map(async (id) => {
        const held = await subject.store.ledger.reserve({ id, orgId, credits: 5, ttlMs: 60_000 });
        assert.equal(held.ok, true);
        // Each settle is retried once, concurrently with itself.
        const [a, b] = await Promise.all([subject.store.ledger.settle(id, charge(orgId, 5, id)), subject.store.ledger.settle(id, charge(orgId, 5, id))]);
        assert.equal([a.duplicate, b.duplicate].filter((d) => !d).length, 1);
      }),
    );
    assert.equal(await subject.balance(orgId), 500);
    assert.equal(await subject.store.ledger.sum(orgId), 500);
    assert.equal(await subject.store.ledger.reserved(orgId), 0);
    const rows = (await subject.store.ledger.list(orgId, { limit: 1000 })).data;
    assert.equal(rows.length, 101);
    assert.equal(new Set(rows.map((r) => r.chargeKey)).size, 101);
  });

  test('settle: one row, balance and reservation together; a second settle is a duplicate', T, async () => {
    const orgId = await subject.org(100);
    const id = `req_${uid('r')}/0`;
    const held = await subject.store.ledger.reserve({ id, orgId, credits: 30, ttlMs: 60_000 });
    assert.equal(held.ok, true);
    assert.equal(await subject.store.ledger.reserved(orgId), 30);
    // Settled for less than was held: the hold goes entirely.
    const first = await subject.store.ledger.settle(id, charge(orgId, 12, id));
    assert.equal(first.duplicate, false);
    assert.equal(first.balance, 88);
    assert.equal(first.entry.chargeKey, id);
    assert.equal(await subject.store.ledger.reserved(orgId), 0);
    const second = await subject.store.ledger.settle(id, charge(orgId, 12, id));
    assert.equal(second.duplicate, true);
    assert.deepEqual(second.entry, first.entry);
    assert.equal(second.balance, 88);
    assert.equal((await subject.store.ledger.list(orgId, { limit: 10 })).data.filter((r) => r.chargeKey === id).length, 1);
    assert.equal(await subject.store.ledger.sum(orgId), 88);
  });

  test('release drops a hold without charging; releasing one that is gone is a no-op', T, async () => {
    const orgId = await subject.org(10);
    const id = uid('res');
    await subject.store.ledger.reserve({ id, orgId, credits: 10, ttlMs: 60_000 });
    assert.equal((await subject.store.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, false);
    await subject.store.ledger.release(id);
    assert.equal(await subject.store.ledger.reserved(orgId), 0);
    await subject.store.ledger.release(id);
    await subject.store.ledger.release(uid('res'));
    assert.equal(await subject.balance(orgId), 10);
    assert.equal(await subject.store.ledger.sum(orgId), 10);
    assert.equal((await subject.store.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, true);
  });

  test('an expired reservation stops counting; settling it afterwards still charges once', T, async () => {
    const orgId = await subject.org(10);
    const id = `req_${uid('r')}/0`;
    const held = await subject.store.ledger.reserve({ id, orgId, credits: 10, ttlMs: 40 });
    assert.equal(held.ok, true);
    await until(async () => (await subject.store.ledger.reserved(orgId)) === 0, { intervalMs: 5, what: 'no reservation left' });
    const next = await subject.store.ledger.reserve({ id: uid('res'), orgId, credits: 4, ttlMs: 60_000 });
    assert.equal(next.ok, true, 'the lapsed hold no longer blocks');
    assert.equal(next.reserved, 0);
    const late = await subject.store.ledger.settle(id, charge(orgId, 10, id));
    assert.equal(late.duplicate, false);
    assert.equal(late.balance, 0);
    assert.equal((await subject.store.ledger.settle(id, charge(orgId, 10, id))).duplicate, true);
    assert.equal(await subject.balance(orgId), 0);
    assert.equal(await subject.store.ledger.sum(orgId), 0);
    assert.equal(await subject.store.ledger.reserved(orgId), 4);
    // A settle whose reservation was released (or never made) is recorded too.
    const gone = `req_${uid('r')}/0`;
    assert.equal((await subject.store.ledger.settle(gone, charge(orgId, 3, gone))).balance, -3);
  });

  test("two servers on one database: racing holds from both overdraw by at most one request, and each counts the other's", T, async () => {
    const orgId = await subject.org(100);
    const other = await subject.opened.another();
    try {
      const reserve = (on: Store, id: string) => on.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
      // One at a time, alternating, then 25 at once from each.
      const granted: { on: Store; id: string }[] = [];
      for (let i = 0; i < 6; i++) {
        for (const [on, name] of [[subject.store, 'a'], [other, 'b']] as const) {
          const id = `req_${uid('seq')}_${name}${i}/0`;
          if ((await reserve(on, id)).ok) granted.push({ on, id });
        }
      }
      assert.ok(granted.length >= 5 && granted.length <= 6, `${granted.length} holds of 20 granted against 100`);
      assert.ok(granted.some((g) => g.on === subject.store) && granted.some((g) => g.on === other));
      // Refused, each gives back what it kept beyond its holds: only the holds count.
      assert.equal(await subject.store.ledger.reserved(orgId), 20 * granted.length);
      assert.equal(await other.ledger.reserved(orgId), 20 * granted.length);
      for (const { on, id } of granted) await on.ledger.settle(id, charge(orgId, 20, id));
      assert.equal(await subject.store.ledger.sum(orgId), 100 - 20 * granted.length);
      assert.equal(await subject.balance(orgId), 100 - 20 * granted.length);

      await subject.store.ledger.append(credit(orgId, 100));
      const before = await subject.balance(orgId);
      const racing = await Promise.all(
        [subject.store, other].flatMap((on, s) => Array.from({ length: 25 }, (_, i) => reserve(on, `req_${uid('race')}_${s}_${i}/0`).then((r) => (r.ok ? 20 : 0)))),
      );
      const held = racing.reduce((x: number, y) => x + y, 0);
      assert.ok(held > before - 20 && held < before + 20, `${held} credits held against a balance of ${before}`);
    } finally {
      await other.close();
    }
  });

  test("a server's reservations count for the others, with what it keeps in reserve, until it closes or they lapse", T, async () => {
    const orgId = await subject.org(1000);
    const first = await subject.opened.another();
    const second = await subject.opened.another();
    try {
      assert.equal((await first.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, true);
      assert.equal(await first.ledger.reserved(orgId), 1);
      // At most the hold and its spare: room for 16 more like it or the credit kept for a store outage,
      // never more than a quarter of what the balance has left (store/shares.ts); never less than the hold.
      const seen = await subject.store.ledger.reserved(orgId);
      assert.ok(seen >= 1 && seen <= 1 + Math.floor((1000 - 1) / 4), `${seen}`);
      await first.close();
      assert.equal(await subject.store.ledger.reserved(orgId), 0, 'a closed server leaves nothing behind');

      assert.equal((await second.ledger.reserve({ id: uid('res'), orgId, credits: 10, ttlMs: 500 })).ok, true);
      assert.ok((await subject.store.ledger.reserved(orgId)) >= 10);
      // The second server goes quiet (as a crashed one would): what it holds lapses shortly after its hold.
      await until(async () => (await subject.store.ledger.reserved(orgId)) === 0, { intervalMs: 5, what: 'no reservation left' });
    } finally {
      await second.close();
    }
  });
  test('organisations are isolated: holds, rows and settles never reach another organisation', T, async () => {
    const a = await subject.org(10);
    const b = await subject.org(10);
    const held = uid('res');
    assert.equal((await subject.store.ledger.reserve({ id: held, orgId: a, credits: 50, ttlMs: 60_000 })).ok, true);
    assert.equal((await subject.store.ledger.reserve({ id: uid('res'), orgId: a, credits: 1, ttlMs: 60_000 })).ok, false);
    assert.equal(await subject.store.ledger.reserved(b), 0);
    const forB = await subject.store.ledger.reserve({ id: uid('res'), orgId: b, credits: 3, ttlMs: 60_000 });
    assert.deepEqual([forB.ok, forB.balance, forB.reserved], [true, 10, 0]);
    assert.equal(await subject.store.ledger.reserved(a), 50);

    // Settling a's reservation id against b's row leaves a's hold in place.
    await subject.store.ledger.settle(held, charge(b, 2, `${held}/b`));
    assert.equal(await subject.store.ledger.reserved(a), 50);
    assert.equal(await subject.balance(a), 10);
    assert.equal(await subject.balance(b), 8);

    await subject.store.ledger.append(charge(a, 4, `req_${uid('r')}/0`));
    assert.equal(await subject.store.ledger.sum(a), 6);
    assert.equal(await subject.store.ledger.sum(b), 8);
    const rowsB = (await subject.store.ledger.list(b, { limit: 100 })).data;
    assert.ok(rowsB.every((r) => r.orgId === b));
    assert.equal(rowsB.length, 2);
    const rowsA = (await subject.store.ledger.list(a, { limit: 100 })).data;
    assert.ok(rowsA.every((r) => r.orgId === a));
    assert.equal(rowsA.length, 2);
    // Paging from another organisation's row id shows nothing of it either.
    assert.ok((await subject.store.ledger.list(b, { limit: 100, startingAfter: rowsA[0].id + 1 })).data.every((r) => r.orgId === b));
  });
}
