/**
 * @module cli/models/install
 * Unpacks a model archive (`tar -xjf`, Debian's tar and bzip2) into a
 * staging folder beside `<dataDir>/models/`, checks it exactly as the
 * sherpa-onnx engine does at start (layout detection, file checks, then a
 * load in a child process that speaks one word), and only then moves it to
 * `<dataDir>/models/<name>`. A model that fails leaves nothing installed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureEspeakData } from '../../engines/sherpa/espeak-data.js';
import { detectLayout, LayoutError, sherpaConfig, type ModelLayout } from '../../engines/sherpa/layout.js';
import { probeModel } from '../../engines/sherpa/probe.js';
import { validateLayout } from '../../engines/sherpa/validate.js';

const run = promisify(execFile);

export class InstallError extends Error {}

export interface Verified {
  layout: ModelLayout;
  sampleRate: number;
  numSpeakers: number;
}

export const modelsDir = (dataDir: string): string => join(dataDir, 'models');

/** Checks an unpacked model folder as the engine would; throws `InstallError` with every problem found. */
export async function verifyModel(dir: string, dataDir: string): Promise<Verified> {
  let layout: ModelLayout;
  try {
    layout = detectLayout(dir);
  } catch (err) {
    throw new InstallError(err instanceof LayoutError ? err.message : (err as Error).message);
  }
  const checked: ModelLayout = { ...layout, files: { ...layout.files } };
  if (!checked.files.dataDir && checked.family !== 'pocket') checked.files.dataDir = ensureEspeakData(join(dataDir, 'espeak-ng-data'));
  const problems = validateLayout(checked);
  if (problems.length) throw new InstallError(problems.join('; '));
  try {
    const probed = await probeModel(sherpaConfig(checked, { numThreads: 1 }));
    return { layout, ...probed };
  } catch (err) {
    throw new InstallError((err as Error).message);
  }
}

/** The folder an archive unpacked into: its one top-level folder, as the official archives have, else the staging folder itself. */
function unpackedRoot(staging: string): string {
  const entries = readdirSync(staging);
  if (entries.length === 1 && statSync(join(staging, entries[0])).isDirectory()) return join(staging, entries[0]);
  return staging;
}

/** Unpacks, verifies and installs `archive` as `<dataDir>/models/<name>`. */
export async function installArchive(archive: string, name: string, dataDir: string, replace: boolean): Promise<{ dir: string } & Verified> {
  const root = modelsDir(dataDir);
  const dir = join(root, name);
  if (existsSync(dir) && !replace) throw new InstallError(`${name} is already installed in ${dir} (remove it first, or pull with --force)`);
  mkdirSync(root, { recursive: true });
  const staging = join(root, `.staging-${name}-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    try {
      await run('tar', ['-xjf', archive, '-C', staging, '--no-same-owner'], { maxBuffer: 1 << 20 });
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr ?? '').trim();
      throw new InstallError(`could not unpack ${archive}: ${stderr || (err as Error).message}`);
    }
    const unpacked = unpackedRoot(staging);
    const verified = await verifyModel(unpacked, dataDir);
    rmSync(dir, { recursive: true, force: true });
    renameSync(unpacked, dir);
    return { dir, ...verified, layout: detectLayout(dir) };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Installed model folders (hidden staging folders and downloads left out). */
export function installedModels(dataDir: string): string[] {
  const root = modelsDir(dataDir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}
