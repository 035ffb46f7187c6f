/**
 * @module test/helpers/s3-server
 * The S3-compatible server of the tests (s3rver) as a process of its own, so
 * a test can stop it and start it again on the same port and data, and its
 * memory is not the test's: `node s3-server.js <dir> <port> <bucket>` prints
 * `{"port": n}` once it listens.
 *
 * s3rver writes an object's file in place, and answers the PUT before the
 * write has reached it; S3 (and MinIO, R2, Ceph) make an object visible only
 * once it is complete. Its store's `putObject` is replaced here by one that
 * writes a temporary file and renames it into place once written, so the
 * tests hold Voicegate to S3's rule rather than to s3rver's shortcut. And its
 * listing walks the folders with a `stat` that throws (a 500) for a file
 * removed since the folder was read; here such a file is left out, as S3's
 * listing leaves out a deleted object.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { posix } from 'node:path';

// Replaced before s3rver's store module takes its own reference to it.
function* walk(dir: string, recurse?: (path: string) => boolean): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = posix.join(dir, name);
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) continue;
    if (!stats.isDirectory()) yield path;
    else if (!recurse || recurse(path)) yield* walk(path, recurse);
  }
}
(createRequire(import.meta.url)('s3rver/lib/utils.js') as { walk: typeof walk }).walk = walk;
const { default: S3rver } = await import('s3rver');

interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
}

const [directory, port, bucket] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket }] });
const store = (server as unknown as { store: FilesystemStore }).store;
store.putObject = async function putObject(object: StoredObject) {
  const path = this.getResourcePath(object.bucket, object.key, 'object');
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const md5 = createHash('md5');
  let size = 0;
  try {
    await pipeline(
      Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content,
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          md5.update(chunk);
          size += chunk.length;
          callback(null, chunk);
        },
      }),
      createWriteStream(temp),
    );
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    await rename(temp, path);
    return { size, md5: digest };
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
};
// `npm test` loads every file under dist/test, this one too, with no arguments: it then starts nothing.
if (directory && port && bucket) {
  const address = await server.run();
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
  process.once('SIGTERM', () => void server.close().finally(() => process.exit(0)));
}
