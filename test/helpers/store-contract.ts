/**
 * @module test/helpers/store-contract
 * The contract every `Store` passes, whatever database is under it: the CRUD
 * basics of organisations, keys, voices (with their clip bytes) and
 * dictionaries; a balance that always equals the sum of its ledger rows;
 * charge keys that make a retried write apply once; reservations that bound
 * the overdraft however many requests race, on one server or several sharing
 * the database, lapse when they expire and never reach across organisations.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { NewLedgerEntry, OrgLimits, Store } from '../../src/store/store.js';

export interface OpenedStore {
  store: Store;
  /** Another server on the same database (its own connection and share of reservations); closed by the test. */
  another(): Promise<Store>;
  /** Closes the store and removes what the run created (file, schema). */
  cleanup(): Promise<void>;
}

const NO_LIMITS: OrgLimits = { maxConcurrent: null, rateLimit: null };
const T = { timeout: 20_000 };

function uid(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Waits for `check` to hold, polling, for at most `ms`. */
async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function charge(orgId: string, credits: number, chargeKey: string | null, extra: Partial<NewLedgerEntry> = {}): NewLedgerEntry {
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

function credit(orgId: string, credits: number): NewLedgerEntry {
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

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`store contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    before(async () => {
      opened = await open();
      store = opened.store;
    });
    after(() => opened?.cleanup());

    /** A new organisation with `credits` on its balance. */
    async function org(credits = 0): Promise<string> {
      const id = uid('org');
      await store.orgs.create({ id, name: 'contract', limits: NO_LIMITS });
      if (credits !== 0) await store.ledger.append(credit(id, credits));
      return id;
    }

    async function balance(orgId: string): Promise<number> {
      return (await store.orgs.get(orgId))!.balance;
    }

    test('organisations: create, get, list, count, limits', T, async () => {
      const before = await store.orgs.count();
      const id = uid('org');
      const limits: OrgLimits = { maxConcurrent: 3, rateLimit: { requests: 10, perSeconds: 60 } };
      const created = await store.orgs.create({ id, name: 'Acme', limits });
      assert.equal(created.id, id);
      assert.equal(created.name, 'Acme');
      assert.equal(created.balance, 0);
      assert.deepEqual(created.limits, limits);
      assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
      assert.deepEqual(await store.orgs.get(id), created);
      assert.equal(await store.orgs.get(uid('org')), null);
      assert.equal(await store.orgs.count(), before + 1);
      assert.ok((await store.orgs.list()).some((o) => o.id === id));
      const updated = await store.orgs.setLimits(id, NO_LIMITS);
      assert.deepEqual(updated?.limits, NO_LIMITS);
      assert.deepEqual((await store.orgs.get(id))?.limits, NO_LIMITS);
      assert.equal(await store.orgs.setLimits(uid('org'), NO_LIMITS), null);
      await assert.rejects(store.orgs.create({ id, name: 'again', limits: NO_LIMITS }));
    });

    test('createFirst: of many racing calls on an empty store exactly one creates; none once an organisation exists', T, async () => {
      const fresh = await open();
      try {
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => fresh.store.orgs.createFirst({ id: uid('org'), name: `first ${i}`, limits: NO_LIMITS })));
        const created = results.filter((r) => r !== null);
        assert.equal(created.length, 1, 'one organisation created');
        assert.equal(await fresh.store.orgs.count(), 1);
        assert.deepEqual(await fresh.store.orgs.get(created[0]!.id), created[0]);
      } finally {
        await fresh.cleanup();
      }
      await org();
      assert.equal(await store.orgs.createFirst({ id: uid('org'), name: 'late', limits: NO_LIMITS }), null);
    });

    test('keys: create, get, list, touch, revoke', T, async () => {
      const orgId = await org();
      const id = uid('key');
      const createdAt = new Date().toISOString();
      const key = await store.keys.create({ id, orgId, name: 'ci', secretHash: 'ab'.repeat(32), createdAt });
      assert.deepEqual(key, { id, orgId, name: 'ci', secretHash: 'ab'.repeat(32), createdAt, lastUsedAt: null, revokedAt: null });
      assert.deepEqual(await store.keys.get(id), key);
      assert.equal(await store.keys.get(uid('key')), null);
      const other = await store.keys.create({ id: uid('key'), orgId, name: null, secretHash: 'cd'.repeat(32), createdAt: new Date(Date.now() + 1).toISOString() });
      assert.deepEqual((await store.keys.list(orgId)).map((k) => k.id), [id, other.id]);
      const usedAt = new Date().toISOString();
      await store.keys.touch(id, usedAt);
      assert.equal((await store.keys.get(id))?.lastUsedAt, usedAt);
      const revokedAt = new Date().toISOString();
      assert.equal((await store.keys.revoke(id, revokedAt))?.revokedAt, revokedAt);
      // A second revoke keeps the first time.
      assert.equal((await store.keys.revoke(id, new Date(Date.now() + 60_000).toISOString()))?.revokedAt, revokedAt);
      assert.equal(await store.keys.revoke(uid('key'), revokedAt), null);
    });

    test('voices: create with clip bytes, get, list newest first, update (transcript too), profiles, delete', T, async () => {
      const orgId = await org();
      const clip = Buffer.concat([Buffer.from([0, 0, 255, 0, 1]), randomBytes(70_000)]);
      const base = {
        orgId,
        name: 'Narrator',
        description: 'calm',
        gender: 'feminine' as const,
        language: 'en',
        accent: 'british',
        transcript: 'hello there',
        clipSeconds: 1.5,
      };
      const first = await store.voices.create({ ...base, id: uid('voice'), createdAt: '2030-01-01T00:00:00.000Z' }, clip);
      assert.deepEqual(first.profiles, {});
      assert.equal(first.name, 'Narrator');
      assert.equal(first.transcript, 'hello there');
      assert.equal(first.clipSeconds, 1.5);
      assert.equal(first.createdAt, '2030-01-01T00:00:00.000Z');
      const second = await store.voices.create({ ...base, id: uid('voice'), transcript: null, accent: null, createdAt: '2030-01-02T00:00:00.000Z' }, Buffer.from('RIFF'));
      assert.deepEqual(await store.voices.get(first.id), first);
      assert.equal(await store.voices.get(uid('voice')), null);
      assert.deepEqual((await store.voices.list(orgId)).map((v) => v.id), [second.id, first.id]);

      const stored = await store.voices.clip(first.id);
      assert.ok(stored && Buffer.isBuffer(stored));
      assert.ok(stored.equals(clip), 'the clip comes back byte for byte');
      assert.equal(await store.voices.clip(uid('voice')), null);

      const updated = await store.voices.update(first.id, { name: 'Renamed', accent: null });
      assert.equal(updated?.name, 'Renamed');
      assert.equal(updated?.accent, null);
      assert.equal(updated?.description, 'calm');
      assert.equal(await store.voices.update(uid('voice'), { name: 'x' }), null);
      // The transcript is set, kept when a patch leaves it out, and cleared with null.
      assert.equal((await store.voices.update(second.id, { transcript: 'what the clip says' }))?.transcript, 'what the clip says');
      assert.equal((await store.voices.update(second.id, { description: 'edited' }))?.transcript, 'what the clip says');
      assert.equal((await store.voices.get(second.id))?.transcript, 'what the clip says');
      assert.equal((await store.voices.update(second.id, { transcript: null }))?.transcript, null);
      assert.equal((await store.voices.get(second.id))?.description, 'edited');
      assert.equal((await store.voices.get(first.id))?.transcript, 'hello there', 'other voices untouched');

      await store.voices.setProfile(first.id, 'omni', { embedding: [0.25, -1], note: 'ok' });
      await store.voices.setProfile(first.id, 'omni', { embedding: [1] });
      await store.voices.setProfile(first.id, 'other', 'plain');
      assert.deepEqual((await store.voices.get(first.id))?.profiles, { omni: { embedding: [1] }, other: 'plain' });

      assert.equal(await store.voices.delete(first.id), true);
      assert.equal(await store.voices.delete(first.id), false);
      assert.equal(await store.voices.get(first.id), null);
      assert.equal(await store.voices.clip(first.id), null);
      assert.deepEqual((await store.voices.list(orgId)).map((v) => v.id), [second.id]);
    });

    test('dictionaries: create, get, list newest first, update, delete', T, async () => {
      const orgId = await org();
      const items = [
        { text: 'SQL', alias: 'sequel' },
        { text: 'Nguyễn', alias: 'win', case_sensitive: true },
      ];
      const a = await store.dicts.create({ id: uid('dict'), orgId, name: 'tech', items, pinned: false, createdAt: new Date(Date.now() - 1000).toISOString() });
      assert.deepEqual(a.items, items);
      assert.equal(a.pinned, false);
      assert.equal(a.updatedAt, a.createdAt);
      const b = await store.dicts.create({ id: uid('dict'), orgId, name: 'names', items: [], pinned: true, createdAt: new Date().toISOString() });
      assert.deepEqual(await store.dicts.get(a.id), a);
      assert.equal(await store.dicts.get(uid('dict')), null);
      assert.deepEqual((await store.dicts.list(orgId)).map((d) => d.id), [b.id, a.id]);
      const updated = await store.dicts.update(a.id, { pinned: true, items: [{ text: 'a', alias: 'b' }] });
      assert.equal(updated?.name, 'tech');
      assert.equal(updated?.pinned, true);
      assert.deepEqual(updated?.items, [{ text: 'a', alias: 'b' }]);
      assert.ok(updated!.updatedAt >= a.updatedAt);
      assert.equal(await store.dicts.update(uid('dict'), { name: 'x' }), null);
      assert.equal(await store.dicts.delete(a.id), true);
      assert.equal(await store.dicts.delete(a.id), false);
      assert.deepEqual((await store.dicts.list(orgId)).map((d) => d.id), [b.id]);
    });

    test('ledger: every row keeps its fields; the balance is the sum of the rows; pages newest first', T, async () => {
      const orgId = await org();
      const first = await store.ledger.append(credit(orgId, 100));
      assert.equal(first.balance, 100);
      assert.equal(first.duplicate, false);
      const entry = charge(orgId, 7, `req_${uid('r')}/0`, { keyId: 'key_1', clientRequestId: 'client-trace-1' });
      const second = await store.ledger.append(entry);
      assert.equal(second.balance, 93);
      assert.deepEqual({ ...second.entry, id: 0, createdAt: '' }, { ...entry, id: 0, createdAt: '' });
      assert.ok(second.entry.id > first.entry.id);
      for (let i = 0; i < 5; i++) await store.ledger.append(charge(orgId, i + 1, null));
      assert.equal(await balance(orgId), 93 - 15);
      assert.equal(await store.ledger.sum(orgId), 93 - 15);
      // What was charged over all time: credits and characters of the charge rows only (the credit is not one).
      const charged = await store.ledger.charged(orgId);
      assert.equal(charged.credits, 15 + 7);
      assert.equal(charged.characters, (await store.ledger.list(orgId, { limit: 100 })).data.filter((e) => e.kind === 'charge').reduce((n, e) => n + (e.characters ?? 0), 0));
      assert.deepEqual(await store.ledger.charged(await org()), { credits: 0, characters: 0 });

      const page1 = await store.ledger.list(orgId, { limit: 4 });
      assert.equal(page1.hasMore, true);
      assert.deepEqual(page1.data.map((e) => e.credits), [-5, -4, -3, -2]);
      const page2 = await store.ledger.list(orgId, { limit: 4, startingAfter: page1.data[3].id });
      assert.equal(page2.hasMore, false);
      assert.deepEqual(page2.data.map((e) => e.credits), [-1, -7, 100]);
      assert.deepEqual(page2.data[1], second.entry);
      await assert.rejects(store.ledger.append(credit(uid('org'), 5)), 'an unknown organisation is refused');
    });

    test('a charge key is written once: a repeated append is a duplicate and writes nothing', T, async () => {
      const orgId = await org(50);
      const key = `req_${uid('r')}/0`;
      const first = await store.ledger.append(charge(orgId, 10, key));
      assert.equal(first.duplicate, false);
      assert.equal(first.balance, 40);
      const second = await store.ledger.append(charge(orgId, 10, key));
      assert.equal(second.duplicate, true);
      assert.deepEqual(second.entry, first.entry);
      assert.equal(second.balance, 40);
      // Rows without a key are all kept.
      await store.ledger.append(charge(orgId, 1, null));
      await store.ledger.append(charge(orgId, 1, null));
      // The balance a duplicate reports is the balance now.
      assert.equal((await store.ledger.append(charge(orgId, 10, key))).balance, 38);
      const rows = (await store.ledger.list(orgId, { limit: 100 })).data;
      assert.equal(rows.filter((r) => r.chargeKey === key).length, 1);
      assert.equal(rows.length, 4);
      assert.equal(await balance(orgId), 38);
      assert.equal(await store.ledger.sum(orgId), 38);
    });

    test('concurrent appends of one charge key write one row', T, async () => {
      const orgId = await org(100);
      const key = `req_${uid('r')}/3`;
      const results = await Promise.all(Array.from({ length: 20 }, () => store.ledger.append(charge(orgId, 9, key))));
      assert.equal(results.filter((r) => !r.duplicate).length, 1);
      assert.ok(results.every((r) => r.entry.id === results[0].entry.id));
      assert.equal(await balance(orgId), 91);
      assert.equal(await store.ledger.sum(orgId), 91);
    });

    test('reservations: granted while balance − reserved > 0, refused otherwise', T, async () => {
      const orgId = await org(10);
      const r = (credits: number) => store.ledger.reserve({ id: uid('res'), orgId, credits, ttlMs: 60_000 });
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
      assert.equal(await store.ledger.reserved(orgId), 39);
      // Reserving moves no credits.
      assert.equal(await balance(orgId), 10);
      assert.equal(await store.ledger.sum(orgId), 10);

      const empty = await org(0);
      assert.equal((await store.ledger.reserve({ id: uid('res'), orgId: empty, credits: 1, ttlMs: 60_000 })).ok, false);
      const zero = await store.ledger.reserve({ id: uid('res'), orgId: await org(1), credits: 0, ttlMs: 60_000 });
      assert.equal(zero.ok, true, 'a zero-credit hold is granted while the balance is above zero');
      assert.deepEqual(await store.ledger.reserve({ id: uid('res'), orgId: uid('org'), credits: 1, ttlMs: 60_000 }), { ok: false, balance: 0, reserved: 0 });
      await assert.rejects(store.ledger.reserve({ id: uid('res'), orgId, credits: -1, ttlMs: 60_000 }), RangeError);
      await assert.rejects(store.ledger.reserve({ id: uid('res'), orgId, credits: 1.5, ttlMs: 60_000 }), RangeError);
    });

    test('reserving the same id twice holds it once', T, async () => {
      const orgId = await org(10);
      const id = uid('res');
      const first = await store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
      const again = await store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
      assert.equal(first.ok, true);
      assert.equal(again.ok, true);
      assert.equal(await store.ledger.reserved(orgId), 20);
    });

    test('the overshoot is bounded: 50 racing reserve+settle of 20 credits against 10', T, async () => {
      const orgId = await org(10);
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const id = `req_${uid('r')}_${i}/0`;
          const held = await store.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
          if (!held.ok) return false;
          await store.ledger.settle(id, charge(orgId, 20, id));
          return true;
        }),
      );
      assert.equal(outcomes.filter(Boolean).length, 1, 'only the first is granted');
      const final = await balance(orgId);
      assert.ok(final >= -20, `balance ${final}`);
      assert.equal(final, -10);
      assert.equal(await store.ledger.sum(orgId), final);
      assert.equal(await store.ledger.reserved(orgId), 0);
    });

    test('racing holds are granted exactly while balance − reserved > 0: 50 of 20 credits against 50 gets 3', T, async () => {
      const orgId = await org(50);
      const results = await Promise.all(Array.from({ length: 50 }, () => store.ledger.reserve({ id: uid('res'), orgId, credits: 20, ttlMs: 60_000 })));
      const granted = results.filter((r) => r.ok);
      assert.equal(granted.length, 3);
      // Each grant saw the holds granted before it; every refusal saw all three.
      assert.deepEqual(granted.map((r) => r.reserved).sort((a, b) => a - b), [0, 20, 40]);
      for (const refused of results.filter((r) => !r.ok)) assert.deepEqual(refused, { ok: false, balance: 50, reserved: 60 });
      assert.equal(await store.ledger.reserved(orgId), 60);
    });

    test('concurrent settlement of many requests charges each exactly once', T, async () => {
      const orgId = await org(1000);
      const ids = Array.from({ length: 100 }, (_, i) => `req_${uid('r')}_${i}/0`);
      await Promise.all(
        ids.map(async (id) => {
          const held = await store.ledger.reserve({ id, orgId, credits: 5, ttlMs: 60_000 });
          assert.equal(held.ok, true);
          // Each settle is retried once, concurrently with itself.
          const [a, b] = await Promise.all([store.ledger.settle(id, charge(orgId, 5, id)), store.ledger.settle(id, charge(orgId, 5, id))]);
          assert.equal([a.duplicate, b.duplicate].filter((d) => !d).length, 1);
        }),
      );
      assert.equal(await balance(orgId), 500);
      assert.equal(await store.ledger.sum(orgId), 500);
      assert.equal(await store.ledger.reserved(orgId), 0);
      const rows = (await store.ledger.list(orgId, { limit: 1000 })).data;
      assert.equal(rows.length, 101);
      assert.equal(new Set(rows.map((r) => r.chargeKey)).size, 101);
    });

    test('settle: one row, balance and reservation together; a second settle is a duplicate', T, async () => {
      const orgId = await org(100);
      const id = `req_${uid('r')}/0`;
      const held = await store.ledger.reserve({ id, orgId, credits: 30, ttlMs: 60_000 });
      assert.equal(held.ok, true);
      assert.equal(await store.ledger.reserved(orgId), 30);
      // Settled for less than was held: the hold goes entirely.
      const first = await store.ledger.settle(id, charge(orgId, 12, id));
      assert.equal(first.duplicate, false);
      assert.equal(first.balance, 88);
      assert.equal(first.entry.chargeKey, id);
      assert.equal(await store.ledger.reserved(orgId), 0);
      const second = await store.ledger.settle(id, charge(orgId, 12, id));
      assert.equal(second.duplicate, true);
      assert.deepEqual(second.entry, first.entry);
      assert.equal(second.balance, 88);
      assert.equal((await store.ledger.list(orgId, { limit: 10 })).data.filter((r) => r.chargeKey === id).length, 1);
      assert.equal(await store.ledger.sum(orgId), 88);
    });

    test('release drops a hold without charging; releasing one that is gone is a no-op', T, async () => {
      const orgId = await org(10);
      const id = uid('res');
      await store.ledger.reserve({ id, orgId, credits: 10, ttlMs: 60_000 });
      assert.equal((await store.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, false);
      await store.ledger.release(id);
      assert.equal(await store.ledger.reserved(orgId), 0);
      await store.ledger.release(id);
      await store.ledger.release(uid('res'));
      assert.equal(await balance(orgId), 10);
      assert.equal(await store.ledger.sum(orgId), 10);
      assert.equal((await store.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, true);
    });

    test('an expired reservation stops counting; settling it afterwards still charges once', T, async () => {
      const orgId = await org(10);
      const id = `req_${uid('r')}/0`;
      const held = await store.ledger.reserve({ id, orgId, credits: 10, ttlMs: 40 });
      assert.equal(held.ok, true);
      await until(async () => (await store.ledger.reserved(orgId)) === 0);
      const next = await store.ledger.reserve({ id: uid('res'), orgId, credits: 4, ttlMs: 60_000 });
      assert.equal(next.ok, true, 'the lapsed hold no longer blocks');
      assert.equal(next.reserved, 0);
      const late = await store.ledger.settle(id, charge(orgId, 10, id));
      assert.equal(late.duplicate, false);
      assert.equal(late.balance, 0);
      assert.equal((await store.ledger.settle(id, charge(orgId, 10, id))).duplicate, true);
      assert.equal(await balance(orgId), 0);
      assert.equal(await store.ledger.sum(orgId), 0);
      assert.equal(await store.ledger.reserved(orgId), 4);
      // A settle whose reservation was released (or never made) is recorded too.
      const gone = `req_${uid('r')}/0`;
      assert.equal((await store.ledger.settle(gone, charge(orgId, 3, gone))).balance, -3);
    });

    test('organisations are isolated: holds, rows and settles never reach another organisation', T, async () => {
      const a = await org(10);
      const b = await org(10);
      const held = uid('res');
      assert.equal((await store.ledger.reserve({ id: held, orgId: a, credits: 50, ttlMs: 60_000 })).ok, true);
      assert.equal((await store.ledger.reserve({ id: uid('res'), orgId: a, credits: 1, ttlMs: 60_000 })).ok, false);
      assert.equal(await store.ledger.reserved(b), 0);
      const forB = await store.ledger.reserve({ id: uid('res'), orgId: b, credits: 3, ttlMs: 60_000 });
      assert.deepEqual([forB.ok, forB.balance, forB.reserved], [true, 10, 0]);
      assert.equal(await store.ledger.reserved(a), 50);

      // Settling a's reservation id against b's row leaves a's hold in place.
      await store.ledger.settle(held, charge(b, 2, `${held}/b`));
      assert.equal(await store.ledger.reserved(a), 50);
      assert.equal(await balance(a), 10);
      assert.equal(await balance(b), 8);

      await store.ledger.append(charge(a, 4, `req_${uid('r')}/0`));
      assert.equal(await store.ledger.sum(a), 6);
      assert.equal(await store.ledger.sum(b), 8);
      const rowsB = (await store.ledger.list(b, { limit: 100 })).data;
      assert.ok(rowsB.every((r) => r.orgId === b));
      assert.equal(rowsB.length, 2);
      const rowsA = (await store.ledger.list(a, { limit: 100 })).data;
      assert.ok(rowsA.every((r) => r.orgId === a));
      assert.equal(rowsA.length, 2);
      // Paging from another organisation's row id shows nothing of it either.
      assert.ok((await store.ledger.list(b, { limit: 100, startingAfter: rowsA[0].id + 1 })).data.every((r) => r.orgId === b));
    });

    test("two servers on one database: racing holds from both overdraw by at most one request, and each counts the other's", T, async () => {
      const orgId = await org(100);
      const other = await opened.another();
      try {
        const reserve = (on: Store, id: string) => on.ledger.reserve({ id, orgId, credits: 20, ttlMs: 60_000 });
        // One at a time, alternating, then 25 at once from each.
        const granted: { on: Store; id: string }[] = [];
        for (let i = 0; i < 6; i++) {
          for (const [on, name] of [[store, 'a'], [other, 'b']] as const) {
            const id = `req_${uid('seq')}_${name}${i}/0`;
            if ((await reserve(on, id)).ok) granted.push({ on, id });
          }
        }
        assert.ok(granted.length >= 5 && granted.length <= 6, `${granted.length} holds of 20 granted against 100`);
        assert.ok(granted.some((g) => g.on === store) && granted.some((g) => g.on === other));
        // Refused, each gives back what it kept beyond its holds: only the holds count.
        assert.equal(await store.ledger.reserved(orgId), 20 * granted.length);
        assert.equal(await other.ledger.reserved(orgId), 20 * granted.length);
        for (const { on, id } of granted) await on.ledger.settle(id, charge(orgId, 20, id));
        assert.equal(await store.ledger.sum(orgId), 100 - 20 * granted.length);
        assert.equal(await balance(orgId), 100 - 20 * granted.length);

        await store.ledger.append(credit(orgId, 100));
        const before = await balance(orgId);
        const racing = await Promise.all(
          [store, other].flatMap((on, s) => Array.from({ length: 25 }, (_, i) => reserve(on, `req_${uid('race')}_${s}_${i}/0`).then((r) => (r.ok ? 20 : 0)))),
        );
        const held = racing.reduce((x: number, y) => x + y, 0);
        assert.ok(held > before - 20 && held < before + 20, `${held} credits held against a balance of ${before}`);
      } finally {
        await other.close();
      }
    });

    test("a server's reservations count for the others, with what it keeps in reserve, until it closes or they lapse", T, async () => {
      const orgId = await org(1000);
      const first = await opened.another();
      const second = await opened.another();
      try {
        assert.equal((await first.ledger.reserve({ id: uid('res'), orgId, credits: 1, ttlMs: 60_000 })).ok, true);
        assert.equal(await first.ledger.reserved(orgId), 1);
        // At most the hold and room for 16 more like it; never less than the hold.
        const seen = await store.ledger.reserved(orgId);
        assert.ok(seen >= 1 && seen <= 17, `${seen}`);
        await first.close();
        assert.equal(await store.ledger.reserved(orgId), 0, 'a closed server leaves nothing behind');

        assert.equal((await second.ledger.reserve({ id: uid('res'), orgId, credits: 10, ttlMs: 500 })).ok, true);
        assert.ok((await store.ledger.reserved(orgId)) >= 10);
        // The second server goes quiet (as a crashed one would): what it holds lapses shortly after its hold.
        await until(async () => (await store.ledger.reserved(orgId)) === 0);
      } finally {
        await second.close();
      }
    });
  });
}
