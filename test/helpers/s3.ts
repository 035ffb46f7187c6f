/**
 * @module test/helpers/s3
 * A real S3-compatible server for tests (s3rver, from npm, in a child
 * process: `s3-server.ts`) on an ephemeral loopback port, its data in a
 * temporary folder, with one bucket. `stop()` and `start()` take it away and
 * bring it back on the same port with the same objects; the credentials it
 * accepts are set in this process's environment, where the AWS SDK's default
 * chain (and every gateway started from here) finds them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { S3BlobStorage } from '../../src/storage/s3.js';

const SERVER = fileURLToPath(new URL('./s3-server.js', import.meta.url));

// s3rver's own key pair; the SDK reads them from the environment like any other.
process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
process.env.AWS_REGION = 'us-east-1';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** Storage on the bucket under `prefix`. */
  storage(prefix?: string): S3BlobStorage;
  /** Every object key in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  /** Takes the server away (its port answers nothing) and waits until it is gone. */
  stop(): Promise<void>;
  /** Brings it back on the same port with the same objects. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  dispose(): Promise<void>;
}

export async function startS3(bucket = 'voicegate-test'): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-s3-'));
  let child: ChildProcess | null = null;
  let port = 0;
  const launch = async () => {
    // s3rver pages listings of more than 1,000 keys with DES-sealed continuation tokens: OpenSSL 3 has DES only in its legacy provider.
    const process_ = spawn(process.execPath, ['--openssl-legacy-provider', SERVER, dir, String(port), bucket], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    process_.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    port = await new Promise<number>((resolve, reject) => {
      // A bound on the wait for its first line, not a pause: a settled promise ignores a later reject.
      AbortSignal.timeout(20_000).addEventListener('abort', () => reject(new Error(`s3rver not ready: ${stderr}`)));
      process_.once('exit', (code) => reject(new Error(`s3rver exited with ${code}: ${stderr}`)));
      createInterface({ input: process_.stdout! }).on('line', (line) => {
        if (line.startsWith('{"port"')) resolve((JSON.parse(line) as { port: number }).port);
      });
    });
    child = process_;
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  const endpoint = `http://127.0.0.1:${port}`;
  const server: S3Server = {
    endpoint,
    bucket,
    storage: (prefix = '') => new S3BlobStorage({ bucket, prefix, region: 'us-east-1', endpoint, forcePathStyle: true }),
    async keys(prefix = '') {
      const storage = server.storage();
      const keys: string[] = [];
      try {
        for await (const info of storage.list(prefix)) keys.push(info.key);
      } finally {
        storage.close();
      }
      return keys.sort();
    },
    stop,
    start: launch,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
