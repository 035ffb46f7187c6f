/**
 * @module cli/models/download
 * Fetches an archive into `<target>.part`, resuming with an HTTP `Range`
 * request from what is already there (after a cut connection in this run, or
 * a `.part` left by an earlier one), then checks its SHA-256 when one is
 * known and renames it to `<target>`. A server that ignores `Range` (200)
 * restarts the file; a `.part` that is already complete (416) is kept.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Progress } from './progress.js';

export class DownloadError extends Error {}

export interface DownloadOptions {
  url: string;
  target: string;
  sha256?: string;
  progress: Progress;
  /** Attempts in all, counting resumes after a cut connection. */
  attempts?: number;
}

function partSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** The SHA-256 of a file, hex. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

export async function download(options: DownloadOptions): Promise<void> {
  const part = `${options.target}.part`;
  const attempts = options.attempts ?? 5;
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      if (await fetchInto(options.url, part, options.progress)) {
        lastError = undefined;
        break;
      }
    } catch (err) {
      if (err instanceof DownloadError) throw err;
      lastError = err as Error;
    }
  }
  if (lastError) throw new DownloadError(`download of ${options.url} failed after ${attempts} attempts: ${lastError.message} (run pull again to resume)`);
  options.progress.end();
  if (options.sha256) {
    const actual = await sha256File(part);
    if (actual !== options.sha256.toLowerCase()) {
      rmSync(part, { force: true });
      throw new DownloadError(`checksum mismatch for ${options.url}: expected SHA-256 ${options.sha256.toLowerCase()}, got ${actual}; nothing was installed`);
    }
  }
  renameSync(part, options.target);
}

/** One request; true when the `.part` file is complete. Throws on a cut connection (retried). */
async function fetchInto(url: string, part: string, progress: Progress): Promise<boolean> {
  const have = partSize(part);
  const headers: Record<string, string> = have > 0 ? { range: `bytes=${have}-` } : {};
  const response = await fetch(url, { headers, redirect: 'follow' });
  if (response.status === 416 && have > 0) {
    const total = /\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1];
    await response.body?.cancel();
    if (total === undefined || Number(total) === have) return true;
    rmSync(part, { force: true });
    return false;
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new DownloadError(`${url} answered ${response.status} ${response.statusText}`);
  }
  if (!response.body) throw new DownloadError(`${url} sent no body`);
  const resumed = response.status === 206;
  const length = Number(response.headers.get('content-length') ?? NaN);
  const start = resumed ? have : 0;
  const expected = Number.isFinite(length) ? start + length : undefined;
  progress.reset(start, expected);
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('data', (chunk: Buffer) => progress.advance(chunk.length));
  const out = createWriteStream(part, { flags: resumed ? 'a' : 'w' });
  try {
    await pipeline(body, out);
  } catch (err) {
    // A write still in flight lands after the error: the next attempt must measure the file after it.
    if (!out.closed) await once(out, 'close');
    throw err;
  }
  const size = partSize(part);
  if (expected !== undefined && size < expected) throw new Error(`the connection closed at ${size} of ${expected} bytes`);
  return true;
}
