/**
 * @module models/import/archive
 * Unpacks a sherpa-onnx model archive (`.tar.bz2`) in-process (tar-stream
 * over unbzip2-stream) into a staging folder, refusing what would reach
 * outside it — a member path with `..` or an absolute path, a link whose
 * target lies outside, a device or FIFO — and counting the bytes unpacked as
 * they are written, so an archive that unpacks past the bound stops there
 * rather than after filling the disk.
 */
import { createReadStream, createWriteStream, linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import bz2 from 'unbzip2-stream';
import tar from 'tar-stream';
import { ImportRefused } from './refusal.js';

const GIB = 1024 ** 3;
const size = (bytes: number) => (bytes >= GIB && bytes % GIB === 0 ? `${bytes / GIB} GiB` : `${bytes.toLocaleString('en-US')} bytes`);

/** The member's path inside the target, or a refusal when it would leave it. */
function memberPath(name: string): string {
  const normal = posix.normalize(name.replace(/\\/g, '/'));
  if (isAbsolute(name) || name.startsWith('/') || /^[a-zA-Z]:/.test(name) || normal === '..' || normal.startsWith('../')) {
    throw new ImportRefused(`archive member ${JSON.stringify(name)} escapes the target`);
  }
  return normal.replace(/^(\.\/)+/, '').replace(/\/$/, '');
}

/** Unpacks the `.tar.bz2` file `archive` into the folder `target` (which exists and is empty); at most `maxUnpackedBytes` of file contents. */
export function unpackArchive(archive: string, target: string, maxUnpackedBytes: number): Promise<void> {
  return unpack(createReadStream(archive), true, target, maxUnpackedBytes);
}

/** Unpacks an uncompressed tar stream (a model shared between gateways) under the same rules. */
export function unpackTar(source: Readable, target: string, maxUnpackedBytes: number): Promise<void> {
  return unpack(source, false, target, maxUnpackedBytes);
}

async function unpack(source: Readable, compressed: boolean, target: string, maxUnpackedBytes: number): Promise<void> {
  const extract = tar.extract();
  let unpacked = 0;
  const over = () => new ImportRefused(`the archive unpacks to more than ${size(maxUnpackedBytes)} (modelImport.maxUnpackedBytes)`, true);
  const feeding = (compressed ? pipeline(source, bz2(), extract) : pipeline(source, extract)).catch((err: unknown) => err);
  try {
    for await (const entry of extract) {
      const { header } = entry;
      const relative = memberPath(header.name);
      if (relative === '' || relative === '.') {
        entry.resume();
        continue;
      }
      const path = join(target, relative);
      switch (header.type) {
        case 'directory':
          mkdirSync(path, { recursive: true });
          entry.resume();
          break;
        case 'file':
        case 'contiguous-file': {
          if (unpacked + (header.size ?? 0) > maxUnpackedBytes) throw over();
          mkdirSync(dirname(path), { recursive: true });
          const count = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              unpacked += chunk.length;
              done(unpacked > maxUnpackedBytes ? over() : null, chunk);
            },
          });
          await pipeline(entry, count, createWriteStream(path, { flags: 'wx' }));
          break;
        }
        case 'symlink':
        case 'link': {
          const link = header.linkname ?? '';
          // A symbolic link's target is relative to its own folder; a hard link's to the archive's root.
          const resolved = header.type === 'symlink' ? posix.join(posix.dirname(relative), link) : link;
          if (isAbsolute(link) || posix.normalize(resolved).startsWith('../') || posix.normalize(resolved) === '..') {
            throw new ImportRefused(`archive member ${JSON.stringify(header.name)} links out of the target (to ${JSON.stringify(link)})`);
          }
          mkdirSync(dirname(path), { recursive: true });
          if (header.type === 'symlink') symlinkSync(link, path);
          else linkSync(join(target, memberPath(link)), path);
          entry.resume();
          break;
        }
        default:
          throw new ImportRefused(`archive member ${JSON.stringify(header.name)} is a ${header.type ?? 'special file'}, which a model archive does not hold`);
      }
    }
  } catch (err) {
    extract.destroy();
    if (err instanceof ImportRefused) throw err;
    throw new ImportRefused(`the archive cannot be read as a .tar.bz2: ${(err as Error).message}`);
  }
  const failed = await feeding;
  if (failed) throw new ImportRefused(`the archive cannot be read as a .tar.bz2: ${(failed as Error).message}`);
}
