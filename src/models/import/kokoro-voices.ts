/**
 * @module models/import/kokoro-voices
 * A Kokoro voices file (community voicepacks: float32 style vectors, 510 × 256
 * per voice, as sherpa-onnx's `voices.bin` holds them) made into a model of
 * its own on an installed Kokoro model, the `target`: the target's files
 * copied beside the new voices file, its graph given the new speaker count
 * and names as metadata (appended: sherpa-onnx reads the last entry of a
 * key, as the mix table does, engines/sherpa/style-mix). The voices speak
 * under the model's id (one voice) or `<id>-<n>`.
 */
import { appendFileSync, closeSync, copyFileSync, cpSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { EngineRegistry } from '../../engines/registry.js';
import { detectLayout } from '../../engines/sherpa/layout.js';
import { metadataBytes } from '../../engines/sherpa/onnx-metadata.js';
import { styleShape } from '../../engines/sherpa/style-mix.js';
import { ImportRefused } from './refusal.js';

const n = (value: number) => value.toLocaleString('en-US');

/** Builds the model `id` in `dir` from the voices file at `voices` (named `name`) and the Kokoro engine `target`. */
export function buildKokoroVoices(dir: string, id: string, voices: { path: string; name: string }, target: string, engines: EngineRegistry): void {
  const config = engines.configOf(target);
  if (!config || config.type !== 'sherpa-onnx' || !engines.get(target)) throw new ImportRefused(`target ${JSON.stringify(target)} is not an installed sherpa-onnx model`);
  let layout;
  try {
    layout = detectLayout(config.model, { family: config.family, files: config.files, lang: config.lang });
  } catch (err) {
    throw new ImportRefused(`target ${JSON.stringify(target)}: ${(err as Error).message}`);
  }
  if (layout.family !== 'kokoro' || !layout.files.model) throw new ImportRefused(`target ${JSON.stringify(target)} is a ${layout.family} model; a voices file is added to a Kokoro model`);
  const shape = styleShape(layout.metadata);
  if (!shape) throw new ImportRefused(`target ${JSON.stringify(target)} gives no style_dim in its metadata`);
  const perVoice = shape.rows * shape.width * 4;
  const size = statSync(voices.path).size;
  if (size === 0 || size % perVoice !== 0) {
    throw new ImportRefused(`\`${voices.name}\` is ${n(size)} bytes: a Kokoro voices file holds ${n(perVoice)} bytes per voice (${shape.rows} × ${shape.width} float32)`);
  }
  const count = size / perVoice;
  if (!finite(voices.path)) throw new ImportRefused(`\`${voices.name}\` holds values that are not numbers (NaN or infinite): not a Kokoro voices file`);
  // The target's other files (tokens, lexicons, dictionaries, espeak-ng-data), then its graph with the new speakers.
  for (const entry of readdirSync(layout.dir)) {
    const path = join(layout.dir, entry);
    if (path === layout.files.model || path === layout.files.voices || entry.endsWith('.onnx') || entry === 'voicegate-model.json') continue;
    cpSync(path, join(dir, entry), { recursive: true, dereference: true });
  }
  const model = join(dir, basename(layout.files.model));
  copyFileSync(layout.files.model, model);
  const names = count === 1 ? [id] : Array.from({ length: count }, (_, i) => `${id}-${i}`);
  appendFileSync(model, metadataBytes({ n_speakers: String(count), speaker_names: names.join(','), id2speaker: names.map((s, i) => `${i}->${s}`).join(','), speaker2id: names.map((s, i) => `${s}->${i}`).join(',') }));
  copyFileSync(voices.path, join(dir, 'voices.bin'));
}

/** Whether every float32 of the file is finite (read in 1 MiB pieces). */
function finite(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      const values = new Float32Array(buffer.buffer, buffer.byteOffset, Math.floor(read / 4));
      for (const v of values) if (!Number.isFinite(v)) return false;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}
