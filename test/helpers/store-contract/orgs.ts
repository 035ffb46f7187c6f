/**
 * @module test/helpers/store-contract/orgs
 * The `OrganisationRepository` contract, whatever database is under it. Organisations: create, get, list, count, limits; `createFirst` makes exactly one of many racing calls on an empty store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OrgLimits } from '../../../src/store/store.js';
import { uid, charge, NO_LIMITS, T, type Subject } from './common.js';

export function orgsContract(subject: Subject): void {
  test('organisations: create, get, list, count, limits', T, async () => {
    const before = await subject.store.orgs.count();
    const id = uid('org');
    const limits: OrgLimits = { maxConcurrent: 3, rateLimit: { requests: 10, perSeconds: 60 } };
    const created = await subject.store.orgs.create({ id, name: 'Acme', limits });
    assert.equal(created.id, id);
    assert.equal(created.name, 'Acme');
    assert.equal(created.balance, 0);
    assert.deepEqual(created.limits, limits);
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
    assert.deepEqual(await subject.store.orgs.get(id), created);
    assert.equal(await subject.store.orgs.get(uid('org')), null);
    assert.equal(await subject.store.orgs.count(), before + 1);
    assert.ok((await subject.store.orgs.list()).some((o) => o.id === id));
    const updated = await subject.store.orgs.setLimits(id, NO_LIMITS);
    assert.deepEqual(updated?.limits, NO_LIMITS);
    assert.deepEqual((await subject.store.orgs.get(id))?.limits, NO_LIMITS);
    assert.equal(await subject.store.orgs.setLimits(uid('org'), NO_LIMITS), null);
    await assert.rejects(subject.store.orgs.create({ id, name: 'again', limits: NO_LIMITS }));
  });

  test('createFirst: of many racing calls on an empty store exactly one creates; none once an organisation exists', T, async () => {
    const fresh = await subject.open();
    try {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => fresh.store.orgs.createFirst({ id: uid('org'), name: `first ${i}`, limits: NO_LIMITS })));
      const created = results.filter((r) => r !== null);
      assert.equal(created.length, 1, 'one organisation created');
      assert.equal(await fresh.store.orgs.count(), 1);
      assert.deepEqual(await fresh.store.orgs.get(created[0]!.id), created[0]);
    } finally {
      await fresh.cleanup();
    }
    await subject.org();
    assert.equal(await subject.store.orgs.createFirst({ id: uid('org'), name: 'late', limits: NO_LIMITS }), null);
  });

}
