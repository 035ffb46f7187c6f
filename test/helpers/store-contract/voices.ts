/**
 * @module test/helpers/store-contract/voices
 * The `VoiceRepository` contract, whatever database is under it. Cloned voices: create with their clip bytes, get, list newest first, update, engine profiles, delete.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { uid, T, type Subject } from './common.js';

export function voicesContract(subject: Subject): void {
  test('voices: create with clip bytes, get, list newest first, update (transcript too), profiles, delete', T, async () => {
    const orgId = await subject.org();
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
    const first = await subject.store.voices.create({ ...base, id: uid('voice'), createdAt: '2030-01-01T00:00:00.000Z' }, clip);
    assert.deepEqual(first.profiles, {});
    assert.equal(first.name, 'Narrator');
    assert.equal(first.transcript, 'hello there');
    assert.equal(first.clipSeconds, 1.5);
    assert.equal(first.createdAt, '2030-01-01T00:00:00.000Z');
    const second = await subject.store.voices.create({ ...base, id: uid('voice'), transcript: null, accent: null, createdAt: '2030-01-02T00:00:00.000Z' }, Buffer.from('RIFF'));
    assert.deepEqual(await subject.store.voices.get(first.id), first);
    assert.equal(await subject.store.voices.get(uid('voice')), null);
    assert.deepEqual((await subject.store.voices.list(orgId)).map((v) => v.id), [second.id, first.id]);

    const stored = await subject.store.voices.clip(first.id);
    assert.ok(stored && Buffer.isBuffer(stored));
    assert.ok(stored.equals(clip), 'the clip comes back byte for byte');
    assert.equal(await subject.store.voices.clip(uid('voice')), null);

    const updated = await subject.store.voices.update(first.id, { name: 'Renamed', accent: null });
    assert.equal(updated?.name, 'Renamed');
    assert.equal(updated?.accent, null);
    assert.equal(updated?.description, 'calm');
    assert.equal(await subject.store.voices.update(uid('voice'), { name: 'x' }), null);
    // The transcript is set, kept when a patch leaves it out, and cleared with null.
    assert.equal((await subject.store.voices.update(second.id, { transcript: 'what the clip says' }))?.transcript, 'what the clip says');
    assert.equal((await subject.store.voices.update(second.id, { description: 'edited' }))?.transcript, 'what the clip says');
    assert.equal((await subject.store.voices.get(second.id))?.transcript, 'what the clip says');
    assert.equal((await subject.store.voices.update(second.id, { transcript: null }))?.transcript, null);
    assert.equal((await subject.store.voices.get(second.id))?.description, 'edited');
    assert.equal((await subject.store.voices.get(first.id))?.transcript, 'hello there', 'other voices untouched');

    await subject.store.voices.setProfile(first.id, 'omni', { embedding: [0.25, -1], note: 'ok' });
    await subject.store.voices.setProfile(first.id, 'omni', { embedding: [1] });
    await subject.store.voices.setProfile(first.id, 'other', 'plain');
    assert.deepEqual((await subject.store.voices.get(first.id))?.profiles, { omni: { embedding: [1] }, other: 'plain' });

    assert.equal(await subject.store.voices.delete(first.id), true);
    assert.equal(await subject.store.voices.delete(first.id), false);
    assert.equal(await subject.store.voices.get(first.id), null);
    assert.equal(await subject.store.voices.clip(first.id), null);
    assert.deepEqual((await subject.store.voices.list(orgId)).map((v) => v.id), [second.id]);
  });
}
