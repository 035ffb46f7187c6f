/**
 * @module cache/blob-storage
 * A small store of named byte blobs: put, get, delete, stat and list by key.
 * The audio cache keeps its disk tier on it (`disk-tier.ts`); long-form jobs'
 * segment outputs and results go on it too, so a shared folder or an object
 * store (`src/storage/s3.ts`) is one more implementation, not a change to its
 * users.
 *
 * Keys are `/`-separated names of `[A-Za-z0-9._-]` parts (no part `.` or
 * `..`, no empty part). A put replaces the blob whole: a reader sees the old
 * bytes or the new, never a part. Every implementation passes the contract
 * suite in `test/helpers/blob-storage-contract.ts`.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { dirname, join, sep } from 'node:path';

export interface BlobInfo {
  key: string;
  size: number;
  /** Epoch milliseconds of the last put. */
  modifiedAt: number;
}

/** Inclusive byte offsets, as an HTTP `Range` names them. */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a presigned download answers with. */
export interface BlobUrlOptions {
  expiresInSeconds: number;
  contentType?: string;
  /** Offered as the download's file name (`Content-Disposition: attachment`). */
  filename?: string;
}

export interface BlobStorage {
  /** Stores `data` under `key`, replacing what was there, atomically. */
  put(key: string, data: Buffer): Promise<void>;
  /** The blob's bytes; null when there is none. */
  get(key: string): Promise<Buffer | null>;
  /** Removes the blob; false when there was none. */
  delete(key: string): Promise<boolean>;
  stat(key: string): Promise<BlobInfo | null>;
  /** Stores the bytes `source` yields under `key`, atomically as `put` does, without holding them all in memory; resolves with their length. */
  write(key: string, source: AsyncIterable<Buffer>): Promise<number>;
  /** The blob's bytes from `range.start` to `range.end` inclusive (all of them without a range) as a stream; null when there is none. */
  read(key: string, range?: ByteRange): Promise<Readable | null>;
  /** Every blob whose key starts with `prefix` (a whole part or more: `a/b` lists `a/b/…`, not `a/bc`). */
  list(prefix?: string): AsyncIterable<BlobInfo>;
  /** A short-lived URL a client can download the blob from without Voicegate (object stores only). */
  url?(key: string, options: BlobUrlOptions): Promise<string>;
  /** Lets go of connections (a server stopping). */
  close?(): void;
}

const PART = /^[A-Za-z0-9._-]+$/;

export function checkBlobKey(key: string): void {
  const parts = key.split('/');
  if (parts.some((part) => !PART.test(part) || part === '.' || part === '..')) throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
}

/** Blobs as files under a folder (by default under the data directory); a put writes a temporary file and renames it. */
export class FileBlobStorage implements BlobStorage {
  constructor(readonly root: string) {}

  private path(key: string): string {
    checkBlobKey(key);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, data: Buffer): Promise<void> {
    // A delete's prune may remove the folder between mkdir and open: tried once more.
    await this.put1(key, data).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? this.put1(key, data) : Promise.reject(err)));
  }

  private async put1(key: string, data: Buffer): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    // Written beside its place and renamed over it: a reader never sees half a blob.
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    const file = await open(temp, 'w');
    try {
      await file.writeFile(data);
    } finally {
      await file.close();
    }
    try {
      await rename(temp, path);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  async write(key: string, source: AsyncIterable<Buffer>): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    let bytes = 0;
    try {
      await pipeline(
        Readable.from(source),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            bytes += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(temp, { flush: true }),
      );
      await rename(temp, path);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
    return bytes;
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    const path = this.path(key);
    // Opened before the stream is handed on, so a missing blob is null rather than a stream error.
    const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!file) return null;
    return createReadStream('', { fd: file, autoClose: true, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<boolean> {
    const path = this.path(key);
    try {
      await unlink(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    await this.prune(dirname(path));
    return true;
  }

  /** Removes the folders a delete left empty, up to the root; a folder another put is filling stays. */
  private async prune(dir: string): Promise<void> {
    while (dir.startsWith(this.root + sep)) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
      dir = dirname(dir);
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const info = await stat(this.path(key));
      return info.isFile() ? { key, size: info.size, modifiedAt: info.mtimeMs } : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    if (prefix) checkBlobKey(prefix);
    yield* this.walk(prefix ? this.path(prefix) : this.root);
  }

  private async *walk(dir: string): AsyncIterable<BlobInfo> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      throw err;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) yield* this.walk(path);
      else if (entry.isFile() && !entry.name.endsWith('.tmp')) {
        const info = await stat(path).catch(() => null);
        if (info) yield { key: path.slice(this.root.length + 1).split(sep).join('/'), size: info.size, modifiedAt: info.mtimeMs };
      }
    }
  }

  /** Removes the whole folder (tests). */
  async destroy(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** Blobs in memory: for tests, and the reference the contract suite holds every implementation to. */
export class MemoryBlobStorage implements BlobStorage {
  private readonly blobs = new Map<string, { data: Buffer; modifiedAt: number }>();

  async put(key: string, data: Buffer): Promise<void> {
    checkBlobKey(key);
    this.blobs.set(key, { data: Buffer.from(data), modifiedAt: Date.now() });
  }

  async get(key: string): Promise<Buffer | null> {
    checkBlobKey(key);
    const blob = this.blobs.get(key);
    return blob ? Buffer.from(blob.data) : null;
  }

  async write(key: string, source: AsyncIterable<Buffer>): Promise<number> {
    checkBlobKey(key);
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(Buffer.from(chunk));
    const data = Buffer.concat(chunks);
    this.blobs.set(key, { data, modifiedAt: Date.now() });
    return data.length;
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    checkBlobKey(key);
    const blob = this.blobs.get(key);
    if (!blob) return null;
    return Readable.from([range ? blob.data.subarray(range.start, range.end + 1) : blob.data]);
  }

  async delete(key: string): Promise<boolean> {
    checkBlobKey(key);
    return this.blobs.delete(key);
  }

  async stat(key: string): Promise<BlobInfo | null> {
    checkBlobKey(key);
    const blob = this.blobs.get(key);
    return blob ? { key, size: blob.data.length, modifiedAt: blob.modifiedAt } : null;
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    if (prefix) checkBlobKey(prefix);
    for (const [key, blob] of [...this.blobs]) {
      if (!prefix || key.startsWith(`${prefix}/`)) yield { key, size: blob.data.length, modifiedAt: blob.modifiedAt };
    }
  }
}
