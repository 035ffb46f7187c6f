/**
 * @module cli/models/pull
 * One model's way from a name to an installed, verified folder: download
 * (resumable, checked against a SHA-256 when one is known) or a local archive,
 * then unpack and verify. `voicegate models pull` prints its progress and the
 * configuration; a server started with `pull` runs it before it serves and
 * logs the progress instead.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { archiveUrl, DEFAULT_BASE_URL, findEntry } from './catalogue.js';
import { download, DownloadError, sha256File } from './download.js';
import { InstallError, installArchive, modelsDir, type Verified } from './install.js';
import type { Progress } from './progress.js';

/** A model that failed to download, unpack or verify: its message is printed, the exit code is 1. */
export class ModelsError extends Error {}

export interface PullOptions {
  dataDir: string;
  name: string;
  /** A local archive, or a URL other than the catalogue's. */
  from?: string;
  /** The archive's expected SHA-256; by default the catalogue's, when known, for a catalogue download. */
  sha256?: string;
  /** Where catalogue archives are fetched from (`<base>/<name>.tar.bz2`). */
  baseUrl?: string;
  /** Replace an installed model of the same name. */
  force: boolean;
  /** The download's progress, given the catalogue's approximate size. */
  progress(approximateSize: number | undefined): Progress;
  /** One line for the operator (the source, before a download). */
  say(line: string): void;
}

export async function pullModel(options: PullOptions): Promise<{ dir: string } & Verified> {
  const { name, from, dataDir } = options;
  const entry = findEntry(name);
  if (!entry && from === undefined) throw new ModelsError(`${name} is not in the catalogue (see voicegate models list); give an archive to install it from`);
  const sha256 = options.sha256 ?? (from === undefined ? entry?.sha256 : undefined);
  let archive: string;
  let downloaded = false;
  if (from !== undefined && !/^https?:\/\//i.test(from)) {
    archive = resolve(from);
    if (!existsSync(archive)) throw new ModelsError(`${from}: no such file`);
    if (sha256) {
      const actual = await sha256File(archive);
      if (actual !== sha256.toLowerCase()) throw new ModelsError(`checksum mismatch for ${from}: expected SHA-256 ${sha256.toLowerCase()}, got ${actual}; nothing was installed`);
    }
  } else {
    const baseUrl = options.baseUrl ?? process.env.VOICEGATE_MODELS_BASE_URL ?? DEFAULT_BASE_URL;
    const url = from ?? archiveUrl(name, baseUrl);
    const downloads = join(modelsDir(dataDir), '.downloads');
    mkdirSync(downloads, { recursive: true });
    archive = join(downloads, `${name}.tar.bz2`);
    options.say(`Downloading ${url}`);
    try {
      await download({ url, target: archive, sha256, progress: options.progress(entry?.size) });
    } catch (err) {
      throw err instanceof DownloadError ? new ModelsError(err.message) : new ModelsError(`download of ${url} failed: ${(err as Error).message}`);
    }
    downloaded = true;
  }
  try {
    return await installArchive(archive, name, dataDir, options.force);
  } catch (err) {
    throw err instanceof InstallError ? new ModelsError(`${name} was not installed: ${err.message}`) : err;
  } finally {
    if (downloaded) rmSync(archive, { force: true });
  }
}
