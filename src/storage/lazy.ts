/**
 * @module storage/lazy
 * A `BlobStorage` whose implementation is loaded on its first call. An object
 * store's SDK takes a quarter of a second to load, which a server that never
 * touches its jobs' storage (or a CLI command) should not pay at start.
 */
import type { Readable } from 'node:stream';
import type { BlobInfo, BlobStorage, BlobUrlOptions, ByteRange } from '../cache/blob-storage.js';

export class LazyBlobStorage implements BlobStorage {
  private loaded: Promise<BlobStorage> | null = null;
  private storage: BlobStorage | null = null;

  constructor(private readonly load: () => Promise<BlobStorage>) {}

  private get ready(): Promise<BlobStorage> {
    return (this.loaded ??= this.load().then((storage) => (this.storage = storage)));
  }

  async put(key: string, data: Buffer): Promise<void> {
    return (await this.ready).put(key, data);
  }
  async get(key: string): Promise<Buffer | null> {
    return (await this.ready).get(key);
  }
  async delete(key: string): Promise<boolean> {
    return (await this.ready).delete(key);
  }
  async stat(key: string): Promise<BlobInfo | null> {
    return (await this.ready).stat(key);
  }
  async write(key: string, source: AsyncIterable<Buffer>): Promise<number> {
    return (await this.ready).write(key, source);
  }
  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    return (await this.ready).read(key, range);
  }
  async *list(prefix?: string): AsyncIterable<BlobInfo> {
    yield* (await this.ready).list(prefix);
  }
  /** Only what the storage it loads can do: an object store signs a URL, a folder cannot. */
  async url(key: string, options: BlobUrlOptions): Promise<string> {
    const storage = await this.ready;
    if (!storage.url) throw new Error('this storage makes no download URLs');
    return storage.url(key, options);
  }
  close(): void {
    this.storage?.close?.();
  }
}
