/**
 * @module bench/lib/pocketsphinx
 * The recogniser of the intelligibility benchmark: Debian's
 * `pocketsphinx_continuous` (packages `pocketsphinx`, `pocketsphinx-en-us`)
 * run once per 16 kHz mono 16-bit WAV file. The model folder is given
 * explicitly, so a missing model is found before anything is synthesised
 * rather than as empty hypotheses.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const RECOGNISER = 'pocketsphinx_continuous';

/** Where Debian's `pocketsphinx-en-us` puts the US English model; `POCKETSPHINX_MODEL_DIR` overrides. */
export function modelDir(): string {
  return process.env.POCKETSPHINX_MODEL_DIR || '/usr/share/pocketsphinx/model/en-us';
}

function modelFiles(dir: string): { hmm: string; lm: string; dict: string } {
  return { hmm: join(dir, 'en-us'), lm: join(dir, 'en-us.lm.bin'), dict: join(dir, 'cmudict-en-us.dict') };
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, command)));
}

/** Null when the recogniser can run; otherwise why not, in words. */
export function unavailableReason(): string | null {
  if (!onPath(RECOGNISER)) return `${RECOGNISER} is not on PATH (Debian: apt-get install pocketsphinx pocketsphinx-en-us)`;
  const missing = Object.values(modelFiles(modelDir())).filter((path) => !existsSync(path));
  if (missing.length > 0) return `the en-us model is missing (${missing.join(', ')}; Debian: apt-get install pocketsphinx-en-us, or set POCKETSPHINX_MODEL_DIR)`;
  return null;
}

/** "pocketsphinx 0.8+5prealpha+1-15 (Debian package), model en-us": the binary prints no version of its own. */
export function recogniserVersion(): string {
  try {
    const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'pocketsphinx'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (version) return `pocketsphinx ${version} (Debian package), model ${modelDir()}`;
  } catch {
    // not a Debian system, or not installed as a package
  }
  return `pocketsphinx (version unknown), model ${modelDir()}`;
}

/** The recogniser's hypothesis for one WAV file (16 kHz mono s16); utterances it splits are joined. */
export async function recognise(wavPath: string): Promise<string> {
  const { hmm, lm, dict } = modelFiles(modelDir());
  const { stdout } = await run(RECOGNISER, ['-infile', wavPath, '-logfn', '/dev/null', '-hmm', hmm, '-lm', lm, '-dict', dict], {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 1 << 20,
  });
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' ');
}
