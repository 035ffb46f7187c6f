/**
 * @module test/helpers/blob-storage-contract
 * The contract every blob storage keeps (src/cache/blob-storage.ts): a put
 * is read back byte for byte and replaces the blob whole; get, stat and
 * delete of an absent key answer null or false; list finds blobs by whole
 * key parts; keys that could leave the storage are refused; concurrent puts
 * of one key leave one of them, whole. The audio cache's disk tier stands
 * on it, and long-form jobs' outputs are meant to.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { BlobStorage } from '../../src/cache/blob-storage.js';

export interface BlobStorageSubject {
  storage: BlobStorage;
  /** Removes whatever the subject left behind. */
  dispose(): Promise<void>;
}

async function listed(storage: BlobStorage, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of storage.list(prefix)) keys.push(info.key);
  return keys.sort();
}

export function blobStorageContract(name: string, open: () => Promise<BlobStorageSubject>): void {
  describe(`blob storage contract: ${name}`, () => {
    const withStorage = async (body: (storage: BlobStorage) => Promise<void>) => {
      const subject = await open();
      try {
        await body(subject.storage);
      } finally {
        await subject.dispose();
      }
    };

    test('a write from a stream is read back whole and by range, and replaces the blob atomically', () =>
      withStorage(async (storage) => {
        const parts = [randomBytes(10_000), randomBytes(1), randomBytes(65_537)];
        async function* chunks() {
          yield* parts;
        }
        assert.equal(await storage.write('w/blob', chunks()), 75_538);
        const whole = Buffer.concat(parts);
        assert.deepEqual(await storage.get('w/blob'), whole);
        const read = async (range?: { start: number; end: number }) => {
          const stream = await storage.read('w/blob', range);
          assert.ok(stream);
          const out: Buffer[] = [];
          for await (const chunk of stream) out.push(chunk as Buffer);
          return Buffer.concat(out);
        };
        assert.deepEqual(await read(), whole);
        assert.deepEqual(await read({ start: 9_999, end: 10_001 }), whole.subarray(9_999, 10_002));
        assert.equal(await storage.read('w/absent'), null);
        async function* failing() {
          yield randomBytes(100);
          throw new Error('source failed');
        }
        await assert.rejects(storage.write('w/blob', failing()), /source failed/);
        assert.deepEqual(await storage.get('w/blob'), whole, 'a failed write leaves the old blob');
        assert.deepEqual(await listed(storage, 'w'), ['w/blob']);
      }));

    test('a put is read back byte for byte, with its size; a second put replaces it', () =>
      withStorage(async (storage) => {
        const data = randomBytes(70_000);
        await storage.put('a/b/blob', data);
        assert.deepEqual(await storage.get('a/b/blob'), data);
        const info = await storage.stat('a/b/blob');
        assert.equal(info?.key, 'a/b/blob');
        assert.equal(info?.size, data.length);
        assert.ok(Math.abs(info!.modifiedAt - Date.now()) < 60_000);
        await storage.put('a/b/blob', Buffer.from('short'));
        assert.deepEqual(await storage.get('a/b/blob'), Buffer.from('short'));
        assert.equal((await storage.stat('a/b/blob'))?.size, 5);
        await storage.put('empty', Buffer.alloc(0));
        assert.deepEqual(await storage.get('empty'), Buffer.alloc(0));
      }));

    test('an absent key: get and stat answer null, delete false; delete removes a blob once', () =>
      withStorage(async (storage) => {
        assert.equal(await storage.get('nothing/here'), null);
        assert.equal(await storage.stat('nothing/here'), null);
        assert.equal(await storage.delete('nothing/here'), false);
        await storage.put('x/y', Buffer.from('1'));
        assert.equal(await storage.delete('x/y'), true);
        assert.equal(await storage.delete('x/y'), false);
        assert.equal(await storage.get('x/y'), null);
      }));

    test('list finds every blob, or those under a prefix of whole parts', () =>
      withStorage(async (storage) => {
        for (const key of ['p/one', 'p/two', 'p/q/three', 'pq/four', 'top']) await storage.put(key, Buffer.from(key));
        assert.deepEqual(await listed(storage), ['p/one', 'p/q/three', 'p/two', 'pq/four', 'top']);
        assert.deepEqual(await listed(storage, 'p'), ['p/one', 'p/q/three', 'p/two']);
        assert.deepEqual(await listed(storage, 'p/q'), ['p/q/three']);
        assert.deepEqual(await listed(storage, 'absent'), []);
        for await (const info of storage.list('p/q')) assert.equal(info.size, 'p/q/three'.length);
      }));

    test('keys that could name something outside the storage are refused', () =>
      withStorage(async (storage) => {
        for (const key of ['../x', 'a/../../x', '/abs', 'a//b', '', 'a/./b', 'sp ace', 'a\\b']) {
          await assert.rejects(storage.put(key, Buffer.from('x')), /invalid blob key/, key);
          await assert.rejects(storage.get(key), /invalid blob key/, key);
        }
      }));

    test('concurrent puts of one key leave one of them whole', () =>
      withStorage(async (storage) => {
        const versions = Array.from({ length: 8 }, (_, i) => Buffer.alloc(50_000 + i, i + 1));
        await Promise.all(versions.map((v) => storage.put('race', v)));
        const got = await storage.get('race');
        assert.ok(got && versions.some((v) => v.equals(got)), 'one put, whole');
        assert.deepEqual(await listed(storage), ['race']);
      }));
  });
}
