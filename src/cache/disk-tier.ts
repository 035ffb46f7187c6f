/**
 * @module cache/disk-tier
 * The audio cache's second tier: entries as blobs (`blob-storage.ts`, by
 * default files under `<dataDir>/cache/`), within a cap on their bytes,
 * least recently used out first. The index of what is there (key, size, in
 * order of use) is kept in memory and rebuilt from the storage's listing at
 * start, oldest write first. Each blob carries its digest (`entry.ts`): a
 * corrupt one is deleted and counts as a miss.
 */
import type { Logger } from '../log/logger.js';
import type { BlobStorage } from './blob-storage.js';
import { decodeEntry, encodeEntry, type CachedAudio } from './entry.js';

export class DiskTier {
  private readonly index = new Map<string, number>();
  bytes = 0;
  evictions = 0;
  corrupt = 0;
  /** Writes and deletes run one after another, so the index and the files agree. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly blobs: BlobStorage,
    readonly maxBytes: number,
    private readonly logger: Logger | null = null,
  ) {}

  get size(): number {
    return this.index.size;
  }

  /** Reads what the storage already holds (after a restart); entries over the cap are evicted, oldest first. */
  async open(prefix: string): Promise<void> {
    const found = [];
    for await (const info of this.blobs.list(prefix)) found.push(info);
    found.sort((a, b) => a.modifiedAt - b.modifiedAt);
    for (const info of found) {
      this.index.set(info.key, info.size);
      this.bytes += info.size;
    }
    await this.evict();
  }

  async get(id: string): Promise<CachedAudio | null> {
    const size = this.index.get(id);
    if (size === undefined) return null;
    let blob: Buffer | null;
    try {
      blob = await this.blobs.get(id);
    } catch (err) {
      this.logger?.warn({ err, entry: id }, 'audio cache entry could not be read');
      return null;
    }
    const entry = blob ? decodeEntry(blob) : null;
    if (!entry) {
      if (blob) {
        this.corrupt++;
        this.logger?.warn({ entry: id }, 'audio cache entry is corrupt (digest mismatch); removed');
      }
      this.forget(id);
      this.queue(() => this.blobs.delete(id).then(() => {}));
      return null;
    }
    this.index.delete(id);
    this.index.set(id, size);
    return entry;
  }

  /** Writes the entry in the background; resolves once it is written (or failed, logged). */
  put(id: string, entry: CachedAudio): Promise<void> {
    const blob = encodeEntry(entry);
    if (blob.length > this.maxBytes) return Promise.resolve();
    return this.queue(async () => {
      await this.blobs.put(id, blob);
      this.forget(id);
      this.index.set(id, blob.length);
      this.bytes += blob.length;
      await this.evict();
    });
  }

  /** Removes every entry whose id the predicate picks, after the writes queued before it; returns their ids. */
  async purge(pick: (id: string) => boolean): Promise<string[]> {
    let ids: string[] = [];
    await this.queue(async () => {
      ids = [...this.index.keys()].filter(pick);
      for (const id of ids) this.forget(id);
      for (const id of ids) await this.blobs.delete(id);
    });
    return ids;
  }

  /** Resolves once every write and delete queued so far has run (tests, shutdown). */
  settled(): Promise<void> {
    return this.work;
  }

  private forget(id: string): void {
    const size = this.index.get(id);
    if (size === undefined) return;
    this.index.delete(id);
    this.bytes -= size;
  }

  private async evict(): Promise<void> {
    while (this.bytes > this.maxBytes && this.index.size > 0) {
      const [oldest] = this.index.keys();
      this.forget(oldest);
      this.evictions++;
      await this.blobs.delete(oldest);
    }
  }

  private queue(action: () => Promise<void>): Promise<void> {
    const run = this.work.then(action).catch((err: unknown) => this.logger?.warn({ err }, 'audio cache disk write failed'));
    this.work = run;
    return run;
  }
}
