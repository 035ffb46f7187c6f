/**
 * @module models/import/sharing
 * Imported models reach every gateway: the gateway that imported one puts its
 * folder, packed as one tar (`models/<id>.tar`), on the shared job storage (a
 * folder several gateways mount, or a bucket) and announces it on the change
 * bus; each other gateway fetches it, unpacks it into its own
 * `<dataDir>/models/<id>/` and registers it. A deletion is announced the same
 * way. A gateway that starts later fetches whatever the storage holds that it
 * has not got. The storage and the bus are handed in by the server, so this
 * stays below them.
 */
import { createReadStream, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { Logger } from '../../log/logger.js';
import { unpackTar } from './archive.js';
import type { ImportAnnouncer, ModelImporter } from './importer.js';

/** The shared storage, as much of it as sharing needs (the job storage's blobs). */
export interface ModelShelf {
  write(key: string, source: AsyncIterable<Buffer>): Promise<number>;
  read(key: string): Promise<Readable | null>;
  delete(key: string): Promise<boolean>;
  list(prefix: string): AsyncIterable<{ key: string }>;
}

/** What the bus carries for models: one imported, or one deleted, by id. */
export interface ModelChange {
  imported?: string;
  deleted?: string;
}

const key = (id: string) => `models/${id}.tar`;

/** The folder `dir` as a tar stream: its files, folders and (inner) symbolic links. */
function packFolder(dir: string): Readable {
  const pack = tar.pack();
  void (async () => {
    const walk = async (folder: string): Promise<void> => {
      for (const name of readdirSync(folder).sort()) {
        const path = join(folder, name);
        const name_ = relative(dir, path).split('\\').join('/');
        const stat = lstatSync(path);
        if (stat.isSymbolicLink()) pack.entry({ name: name_, type: 'symlink', linkname: readlinkSync(path) });
        else if (stat.isDirectory()) {
          pack.entry({ name: name_, type: 'directory' });
          await walk(path);
        } else if (stat.isFile()) {
          const entry = pack.entry({ name: name_, size: stat.size });
          await pipeline(createReadStream(path), entry);
        }
      }
    };
    await walk(dir);
    pack.finalize();
  })().catch((err: unknown) => pack.destroy(err as Error));
  return pack as unknown as Readable;
}

export class ModelSharing implements ImportAnnouncer {
  constructor(
    private readonly importer: ModelImporter,
    private readonly shelf: ModelShelf,
    private readonly announce: (change: ModelChange) => Promise<void>,
    private readonly maxUnpackedBytes: number,
    private readonly logger: Logger,
  ) {}

  /** After an import here: the folder onto the shelf, then the news on the bus. */
  async imported(id: string): Promise<void> {
    await this.shelf.write(key(id), packFolder(join(this.importer.modelsDir, id)));
    await this.announce({ imported: id });
  }

  /** After a deletion here: off the shelf, and the news on the bus. */
  async deleted(id: string): Promise<void> {
    await this.shelf.delete(key(id));
    await this.announce({ deleted: id });
  }

  /** What another gateway announced. */
  async heard(change: ModelChange): Promise<void> {
    if (change.imported) await this.fetch(change.imported);
    if (change.deleted && this.importer.isImported(change.deleted)) await this.importer.remove(change.deleted, { announce: false });
  }

  /** At start: every model on the shelf that this gateway has not got. */
  async fetchMissing(): Promise<void> {
    for await (const { key: found } of this.shelf.list('models')) {
      const match = /^models\/([A-Za-z0-9][A-Za-z0-9._-]{0,63})\.tar$/.exec(found);
      if (match) await this.fetch(match[1]).catch((err: unknown) => this.logger.error({ model: match[1], reason: (err as Error).message }, 'imported model could not be fetched from the shared storage'));
    }
  }

  /** Fetches model `id` into `<dataDir>/models/<id>/` (unless it is there) and registers it. */
  private async fetch(id: string): Promise<void> {
    const dir = join(this.importer.modelsDir, id);
    if (!existsSync(dir)) {
      const source = await this.shelf.read(key(id));
      if (!source) return;
      const staging = this.importer.staging();
      try {
        const unpacked = join(staging, 'model');
        mkdirSync(unpacked);
        await unpackTar(source, unpacked, this.maxUnpackedBytes);
        if (!existsSync(dir)) renameSync(unpacked, dir);
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    }
    const loaded = await this.importer.load(id);
    if (loaded) this.logger.info({ model: id }, 'model imported on another gateway, fetched and served here');
  }
}

