/**
 * @module test/helpers/store-contract/dictionaries
 * The `DictRepository` contract, whatever database is under it. Pronunciation dictionaries: create, get, list newest first, update, delete.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uid, T, type Subject } from './common.js';

export function dictionariesContract(subject: Subject): void {
  test('dictionaries: create, get, list newest first, update, delete', T, async () => {
    const orgId = await subject.org();
    const items = [
      { text: 'SQL', alias: 'sequel' },
      { text: 'Nguyễn', alias: 'win', case_sensitive: true },
    ];
    const a = await subject.store.dicts.create({ id: uid('dict'), orgId, name: 'tech', items, pinned: false, createdAt: new Date(Date.now() - 1000).toISOString() });
    assert.deepEqual(a.items, items);
    assert.equal(a.pinned, false);
    assert.equal(a.updatedAt, a.createdAt);
    const b = await subject.store.dicts.create({ id: uid('dict'), orgId, name: 'names', items: [], pinned: true, createdAt: new Date().toISOString() });
    assert.deepEqual(await subject.store.dicts.get(a.id), a);
    assert.equal(await subject.store.dicts.get(uid('dict')), null);
    assert.deepEqual((await subject.store.dicts.list(orgId)).map((d) => d.id), [b.id, a.id]);
    const updated = await subject.store.dicts.update(a.id, { pinned: true, items: [{ text: 'a', alias: 'b' }] });
    assert.equal(updated?.name, 'tech');
    assert.equal(updated?.pinned, true);
    assert.deepEqual(updated?.items, [{ text: 'a', alias: 'b' }]);
    assert.ok(updated!.updatedAt >= a.updatedAt);
    assert.equal(await subject.store.dicts.update(uid('dict'), { name: 'x' }), null);
    assert.equal(await subject.store.dicts.delete(a.id), true);
    assert.equal(await subject.store.dicts.delete(a.id), false);
    assert.deepEqual((await subject.store.dicts.list(orgId)).map((d) => d.id), [b.id]);
  });
}
