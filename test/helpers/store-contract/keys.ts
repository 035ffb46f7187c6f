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
    const unlimited = { budget: null, scopes: null, models: null, expiresAt: null, allowedNetworks: null };
    assert.deepEqual(key, { id, orgId, name: 'ci', secretHash: 'ab'.repeat(32), createdAt, lastUsedAt: null, revokedAt: null, ...unlimited });
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

  test('keys: a policy is stored, changed field by field and cleared', T, async () => {
    const orgId = await subject.org();
    const id = uid('key');
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const policy = {
      budget: { credits: 5000, period: 'month' as const },
      scopes: ['tts', 'voices:read'],
      models: ['sonic-2'],
      expiresAt,
      allowedNetworks: ['10.0.0.0/8', '2001:db8::/32'],
    };
    const key = await subject.store.keys.create({ id, orgId, name: 'staging', secretHash: 'ef'.repeat(32), createdAt: new Date().toISOString(), ...policy });
    assert.deepEqual({ budget: key.budget, scopes: key.scopes, models: key.models, expiresAt: key.expiresAt, allowedNetworks: key.allowedNetworks }, policy);
    assert.deepEqual(await subject.store.keys.get(id), key);
    // Only the fields named change.
    const renamed = await subject.store.keys.update(id, { name: 'bot', budget: { credits: 10, period: 'day' } });
    assert.deepEqual(renamed, { ...key, name: 'bot', budget: { credits: 10, period: 'day' } });
    const cleared = await subject.store.keys.update(id, { budget: null, scopes: null, models: null, expiresAt: null, allowedNetworks: null });
    assert.deepEqual(cleared, { ...key, name: 'bot', budget: null, scopes: null, models: null, expiresAt: null, allowedNetworks: null });
    // An empty list is a list (no scope at all), not "no limit".
    assert.deepEqual((await subject.store.keys.update(id, { scopes: [] }))?.scopes, []);
    assert.deepEqual(await subject.store.keys.update(id, {}), await subject.store.keys.get(id));
    assert.equal(await subject.store.keys.update(uid('key'), { name: 'x' }), null);
  });
}
