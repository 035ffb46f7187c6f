/** @module config/sections/storage.test — the jobs' storage from the file or `VOICEGATE_STORAGE_URL`, and what is refused. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../load.js';

test('by default jobs keep their files in a folder', () => {
  assert.equal(loadConfig({ env: {} }).storage.kind, 'files');
});

test('VOICEGATE_STORAGE_URL names the bucket and prefix; the path style is a variable of its own', () => {
  const { storage } = loadConfig({ env: { VOICEGATE_STORAGE_URL: 's3://voicegate-audio/prod/jobs/', VOICEGATE_STORAGE_FORCE_PATH_STYLE: 'true' } });
  assert.deepEqual({ kind: storage.kind, bucket: storage.bucket, prefix: storage.prefix, forcePathStyle: storage.forcePathStyle }, {
    kind: 's3',
    bucket: 'voicegate-audio',
    prefix: 'prod/jobs',
    forcePathStyle: true,
  });
  assert.equal(loadConfig({ env: { VOICEGATE_STORAGE_URL: 's3://voicegate-audio' } }).storage.prefix, '');
  const fromFile = loadConfig({ env: {}, overrides: { storage: { kind: 's3', bucket: 'books', region: 'eu-west-1', endpoint: 'http://minio:9000' } } }).storage;
  assert.deepEqual([fromFile.bucket, fromFile.region, fromFile.endpoint], ['books', 'eu-west-1', 'http://minio:9000']);
});

test('a bucket-less s3 storage, a bad bucket or prefix, and credentials in the file are refused', () => {
  assert.throws(() => loadConfig({ env: {}, overrides: { storage: { kind: 's3' } } }), (err: unknown) => err instanceof ConfigError && /bucket/.test(err.message));
  assert.throws(() => loadConfig({ env: { VOICEGATE_STORAGE_URL: 's3://Bad_Bucket/x' } }), ConfigError);
  assert.throws(() => loadConfig({ env: { VOICEGATE_STORAGE_URL: 's3://books/../x' } }), ConfigError);
  assert.throws(() => loadConfig({ env: { VOICEGATE_STORAGE_URL: 'https://books/x' } }), ConfigError);
  // Credentials come from the AWS SDK's chain only: the file has no place for them.
  assert.throws(() => loadConfig({ env: {}, overrides: { storage: { kind: 's3', bucket: 'books', accessKeyId: 'AKIA', secretAccessKey: 'x' } } }), ConfigError);
});

test('VOICEGATE_JOBS=auto turns jobs on exactly when their storage is a bucket', () => {
  assert.equal(loadConfig({ env: { VOICEGATE_JOBS: 'auto' } }).jobs.enabled, false);
  assert.equal(loadConfig({ env: { VOICEGATE_JOBS: 'auto', VOICEGATE_STORAGE_URL: 's3://books/jobs' } }).jobs.enabled, true);
  assert.equal(loadConfig({ env: { VOICEGATE_JOBS: 'off', VOICEGATE_STORAGE_URL: 's3://books/jobs' } }).jobs.enabled, false);
  assert.equal(loadConfig({ env: {} }).jobs.enabled, true, 'on by default, on a folder, for one machine');
  assert.throws(() => loadConfig({ env: { VOICEGATE_CACHE: 'auto' } }), ConfigError, 'only the jobs switch takes auto');
});
