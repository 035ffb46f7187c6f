/**
 * @module test/blob-storage.s3
 * The blob-storage contract against a real S3-compatible server (s3rver in a
 * process of its own) through the AWS SDK, a fresh prefix per test; then
 * what only an object store does: multipart writes, presigned downloads.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { blobStorageContract } from './helpers/blob-storage-contract.js';
import { startS3, type S3Server } from './helpers/s3.js';

let s3: S3Server;
before(async () => {
  s3 = await startS3();
});
after(() => s3?.dispose());

blobStorageContract('s3, under a prefix', async () => {
  const storage = s3.storage(`t-${randomBytes(4).toString('hex')}/blobs`);
  return { storage, dispose: async () => storage.close() };
});

describe('s3 blob storage beyond the contract', () => {
  const collect = async (stream: NodeJS.ReadableStream | null) => {
    assert.ok(stream);
    const out: Buffer[] = [];
    for await (const chunk of stream) out.push(chunk as Buffer);
    return Buffer.concat(out);
  };

  test('a write larger than a part goes up in parts and appears whole; a source failing after some parts leaves the old blob', { timeout: 120_000 }, async () => {
    const storage = s3.storage(`m-${randomBytes(4).toString('hex')}`);
    try {
      const whole = randomBytes(12 * 1024 * 1024 + 7);
      async function* chunks() {
        for (let at = 0; at < whole.length; at += 64 * 1024) yield whole.subarray(at, at + 64 * 1024);
      }
      assert.equal(await storage.write('big', chunks()), whole.length);
      assert.equal((await storage.stat('big'))?.size, whole.length);
      assert.deepEqual(await collect(await storage.read('big')), whole);
      const start = 5 * 1024 * 1024 - 3;
      assert.deepEqual(await collect(await storage.read('big', { start, end: start + 9 })), whole.subarray(start, start + 10));

      async function* failing() {
        for (let i = 0; i < 11 * 16; i++) yield randomBytes(64 * 1024);
        throw new Error('source failed after parts');
      }
      await assert.rejects(storage.write('big', failing()), /source failed after parts/);
      assert.equal((await storage.stat('big'))?.size, whole.length, 'the old blob stands');
      await assert.rejects(storage.write('new', failing()), /source failed after parts/);
      assert.equal(await storage.stat('new'), null, 'nothing of the failed upload is visible');
    } finally {
      storage.close();
    }
  });

  test('a presigned URL downloads the same bytes, by range too, with the type and name asked for', { timeout: 60_000 }, async () => {
    const storage = s3.storage('presigned');
    try {
      const data = randomBytes(100_000);
      await storage.put('result', data);
      const url = await storage.url('result', { expiresInSeconds: 60, contentType: 'audio/wav', filename: 'job.wav' });
      // s3rver does not check V4 signatures: that the URL is signed, and for how long, is what is checked here.
      assert.match(url, /X-Amz-Signature=[0-9a-f]{64}/);
      assert.match(url, /X-Amz-Expires=60(&|$)/);
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'audio/wav');
      assert.match(response.headers.get('content-disposition') ?? '', /job\.wav/);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), data);
      const ranged = await fetch(url, { headers: { range: 'bytes=10-19' } });
      assert.equal(ranged.status, 206);
      assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), data.subarray(10, 20));
    } finally {
      storage.close();
    }
  });
});
