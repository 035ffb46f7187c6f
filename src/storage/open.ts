/**
 * @module storage/open
 * The blob storage of long-form jobs from the configuration: a folder on
 * this machine (`jobs.dir`, the default) or an S3-compatible bucket
 * (`storage.kind: s3`). Each kind of storage is one line here.
 */
import { resolve } from 'node:path';
import { FileBlobStorage, type BlobStorage } from '../cache/blob-storage.js';
import type { StorageConfig } from '../config/schema.js';
import { LazyBlobStorage } from './lazy.js';

/** Where jobs' blobs go; `dir` is the folder of the `files` kind. */
export function openJobStorage(storage: StorageConfig, dir: string): BlobStorage {
  if (storage.kind === 's3') {
    const options = { bucket: storage.bucket!, prefix: storage.prefix, region: storage.region, endpoint: storage.endpoint, forcePathStyle: storage.forcePathStyle };
    // The AWS SDK is loaded by the first job that needs the bucket, not at every start.
    return new LazyBlobStorage(async () => new (await import('./s3.js')).S3BlobStorage(options));
  }
  return new FileBlobStorage(resolve(dir));
}

/** Says where jobs' blobs go, for the start-up log (no credential is part of it). */
export function describeStorage(storage: StorageConfig, dir: string): string {
  return storage.kind === 's3' ? `s3://${storage.bucket}${storage.prefix ? `/${storage.prefix}` : ''}` : resolve(dir);
}
