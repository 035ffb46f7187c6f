/**
 * @module test/blob-storage.contract
 * Runs the blob-storage contract against the file storage (a fresh folder
 * per test, removed after) and the in-memory one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBlobStorage, MemoryBlobStorage } from '../src/cache/blob-storage.js';
import { blobStorageContract } from './helpers/blob-storage-contract.js';

blobStorageContract('files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'voicegate-blobs-'));
  return { storage: new FileBlobStorage(join(root, 'blobs')), dispose: async () => rmSync(root, { recursive: true, force: true }) };
});

blobStorageContract('memory', async () => ({ storage: new MemoryBlobStorage(), dispose: async () => {} }));
