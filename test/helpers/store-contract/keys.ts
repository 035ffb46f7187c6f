/**
 * @module test/helpers/store-contract/keys
 * The `KeyRepository` contract, whatever database is under it. API keys: create, get, list, touch, revoke.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uid, T, type Subject } from './common.js';

export function keysContract(subject: Subject): void {
  test('keys: create, get, list, touch, revoke', T, async () => {
    const orgId = await subject.org();
    const id = uid('key');
    const createdAt = new Date().toISOString();
    const key = await subject.store.keys.create({ id, orgId, name: 'ci', secretHash: 'ab'.repeat(32), createdAt });
    assert.deepEqual(key, { id, orgId, name: 'ci', secretHash: 'ab'.repeat(32), createdAt, lastUsedAt: null, revokedAt: null });
    assert.deepEqual(await subject.store.keys.get(id), key);
    assert.equal(await subject.store.keys.get(uid('key')), null);
    const other = await subject.store.keys.create({ id: uid('key'), orgId, name: null, secretHash: 'cd'.repeat(32), createdAt: new Date(Date.now() + 1).toISOString() });
    assert.deepEqual((await subject.store.keys.list(orgId)).map((k) => k.id), [id, other.id]);
    const usedAt = new Date().toISOString();
    await subject.store.keys.touch(id, usedAt);
    assert.equal((await subject.store.keys.get(id))?.lastUsedAt, usedAt);
    const revokedAt = new Date().toISOString();
    assert.equal((await subject.store.keys.revoke(id, revokedAt))?.revokedAt, revokedAt);
    // A second revoke keeps the first time.
    assert.equal((await subject.store.keys.revoke(id, new Date(Date.now() + 60_000).toISOString()))?.revokedAt, revokedAt);
    assert.equal(await subject.store.keys.revoke(uid('key'), revokedAt), null);
  });
}
