/**
 * @module engines/sherpa/validate
 * Checks a model's files before sherpa-onnx sees them, because sherpa ends
 * the whole process natively on a corrupt `.onnx`, a malformed `tokens.txt`
 * or a Piper export without its metadata. Each problem comes back as a
 * sentence an operator can act on; an empty list means the files look sound
 * (the load probe, `probe.ts`, then proves it).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { REQUIRED, WITH_METADATA, type FileRole, type ModelLayout } from './layout.js';
import { OnnxFormatError, readOnnxSummary } from './onnx-metadata.js';

const ONNX_ROLES: FileRole[] = ['model', 'acousticModel', 'vocoder', 'encoder', 'decoder', 'lmFlow', 'lmMain', 'textConditioner'];

export function validateLayout(layout: ModelLayout): string[] {
  const problems: string[] = [];
  const f = layout.files;
  for (const role of REQUIRED[layout.family]) {
    const path = f[role];
    if (!path) problems.push(`no ${role} file was found in ${layout.dir} for a ${layout.family} model`);
    // A lexicon may be a comma-separated list: each file is checked below.
    else if (role !== 'lexicon' && !isFile(path)) problems.push(`${role} file ${path} does not exist`);
  }
  if (f.dataDir && !existsSync(f.dataDir)) problems.push(`dataDir ${f.dataDir} does not exist`);
  else if (f.dataDir && !isFile(`${f.dataDir}/phontab`)) problems.push(`dataDir ${f.dataDir} is not an espeak-ng-data folder (no phontab)`);
  for (const path of (f.lexicon ?? '').split(',').filter(Boolean)) if (!isFile(path)) problems.push(`lexicon ${path} does not exist`);
  if (problems.length) return problems;

  for (const role of ONNX_ROLES) {
    const path = f[role];
    if (!path) continue;
    try {
      const summary = readOnnxSummary(path);
      if (WITH_METADATA[layout.family].includes(role) && !summary.metadata.sample_rate) {
        problems.push(
          `${basename(path)} has no sherpa-onnx metadata (sample_rate is missing): a raw Piper export needs its .onnx.json settings added as ONNX metadata, or use the sherpa-onnx archive of the voice`,
        );
      }
    } catch (err) {
      const reason = err instanceof OnnxFormatError ? err.message : (err as Error).message;
      problems.push(`${basename(path)} is not a valid ONNX model: ${reason}`);
    }
  }
  if (f.tokens) problems.push(...tokensProblems(f.tokens));
  for (const role of ['vocabJson', 'tokenScoresJson'] as const) {
    const path = f[role];
    if (!path) continue;
    try {
      JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      problems.push(`${basename(path)} is not valid JSON`);
    }
  }
  return problems;
}

/**
 * `tokens.txt` is one `<symbol> <id>` per line (the symbol may itself be a space, leaving the id
 * alone on the line); ids are non-negative integers, each used once.
 */
export function tokensProblems(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) return [`${basename(path)} is empty`];
  const ids = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    const match = /^(?:(.+?)[ \t]+)?(\d+)[ \t]*$/u.exec(line);
    if (!match) return [`${basename(path)} line ${i + 1} is not "<symbol> <id>": ${JSON.stringify(line.slice(0, 40))}`];
    const id = Number(match[2]);
    if (!Number.isSafeInteger(id) || id > 1_000_000) return [`${basename(path)} line ${i + 1} has an id out of range`];
    if (ids.has(id)) return [`${basename(path)} line ${i + 1} repeats id ${id}`];
    ids.add(id);
  }
  return [];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
