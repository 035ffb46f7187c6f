/**
 * @module engines/sherpa/espeak-data
 * An `espeak-ng-data` folder for models that come without one (a raw Piper
 * voice, a stand-in): sherpa-onnx phonemizes with eSpeak NG and needs its data
 * files on disk. Our eSpeak NG dependency already ships them, packed into one
 * file whose loader lists each file's byte range; this unpacks them once into
 * a folder and reuses it after (a `.complete` marker guards half-written ones).
 */
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const PREFIX = '/usr/share/espeak-ng-data/';

/** Unpacks eSpeak NG's data into `target` unless it is already there; returns `target`. */
export function ensureEspeakData(target: string): string {
  if (existsSync(join(target, '.complete'))) return target;
  const packageDir = dirname(createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten/package.json'));
  const loader = readFileSync(join(packageDir, 'espeak-ng.js'), 'utf8');
  const files = [...loader.matchAll(/\{filename:"([^"]+)",start:(\d+),end:(\d+)\}/g)]
    .filter((m) => m[1].startsWith(PREFIX))
    .map((m) => ({ path: m[1].slice(PREFIX.length), start: Number(m[2]), end: Number(m[3]) }));
  if (files.length === 0) throw new Error('the bundled eSpeak NG has no packed data files');
  const staging = `${target}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const packed = openSync(join(packageDir, 'espeak-ng.data'), 'r');
  try {
    for (const file of files) {
      if (file.path.includes('..')) continue;
      const bytes = Buffer.alloc(file.end - file.start);
      readSync(packed, bytes, 0, bytes.length, file.start);
      const out = join(staging, file.path);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, bytes);
    }
  } finally {
    closeSync(packed);
  }
  writeFileSync(join(staging, '.complete'), '');
  mkdirSync(dirname(target), { recursive: true });
  try {
    renameSync(staging, target);
  } catch (err) {
    // Another process finished first: keep its copy.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(target, '.complete'))) throw err;
  }
  return target;
}
