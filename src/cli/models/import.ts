/**
 * @module cli/models/import
 * `voicegate models import <path…>`: hands a running server a model to
 * import (`POST /admin/models` with the admin token), so it is checked,
 * installed in that server's data folder and served at once, with no
 * restart. The paths are a Piper voice's `.onnx` with its `.onnx.json` (found
 * beside the `.onnx` when left out), a sherpa-onnx `.tar.bz2`, or a Kokoro
 * voices file (`.bin`) with `--target`.
 */
import { existsSync, openAsBlob } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Config } from '../../config/schema.js';
import { UsageError } from '../accounts.js';
import { serverUrl } from '../cache.js';
import { ModelsError } from './pull.js';

export const IMPORT_USAGE = `voicegate models import <voice.onnx> [voice.onnx.json] | <model.tar.bz2> | <voices.bin> --target <kokoro model> [--id <id>] [--url <server>]
    Imports a Piper voice (its .onnx and .onnx.json, as Piper exports them), a sherpa-onnx archive,
    or a Kokoro voices file added to an installed Kokoro model, into the running server at --url
    (default: this config's host and port), through its admin API (VOICEGATE_ADMIN_TOKEN): checked,
    installed and served at once, under --id or the file's name.`;

/** The multipart parts for `paths`: `model` with `config`, or `archive`. */
export function importParts(paths: string[]): [part: 'model' | 'config' | 'archive' | 'voices', path: string][] {
  const voices = paths.find((p) => /\.bin$/i.test(p));
  if (voices) {
    if (paths.length > 1) throw new UsageError(`give a voices file alone, with --target\n\n${IMPORT_USAGE}`);
    return [['voices', voices]];
  }
  const archive = paths.find((p) => /\.(tar\.bz2|tbz2?)$/i.test(p));
  if (archive) {
    if (paths.length > 1) throw new UsageError(`give an archive alone, or a .onnx with its .onnx.json\n\n${IMPORT_USAGE}`);
    return [['archive', archive]];
  }
  const model = paths.find((p) => /\.onnx$/i.test(p));
  if (!model) throw new UsageError(`give a Piper voice's .onnx (with its .onnx.json) or a sherpa-onnx .tar.bz2\n\n${IMPORT_USAGE}`);
  const config = paths.find((p) => /\.json$/i.test(p)) ?? (existsSync(`${model}.json`) ? `${model}.json` : undefined);
  if (paths.length > (config && paths.includes(config) ? 2 : 1)) throw new UsageError(`unexpected ${paths.filter((p) => p !== model && p !== config).join(' ')}\n\n${IMPORT_USAGE}`);
  // Without its .onnx.json the server refuses the voice and says so.
  return config ? [['model', model], ['config', config]] : [['model', model]];
}

export async function importModel(config: Config, paths: string[], options: { id?: string; url?: string; target?: string }, write: (line: string) => void = console.log): Promise<void> {
  if (paths.length === 0) throw new UsageError(`import needs the model's files\n\n${IMPORT_USAGE}`);
  for (const path of paths) if (!existsSync(path)) throw new ModelsError(`${path}: no such file`);
  const token = config.accounts.adminToken;
  if (!token) throw new UsageError('importing into a server needs its admin token (VOICEGATE_ADMIN_TOKEN)');
  const form = new FormData();
  if (options.id !== undefined) form.append('id', options.id);
  const parts = importParts(paths);
  if (parts[0][0] === 'voices') {
    if (options.target === undefined) throw new UsageError(`a voices file needs --target, the installed Kokoro model it is added to\n\n${IMPORT_USAGE}`);
    form.append('target', options.target);
  }
  for (const [part, path] of parts) form.append(part, await openAsBlob(resolve(path)), basename(path));
  const url = `${serverUrl(config, options.url)}/admin/models`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  } catch (err) {
    throw new UsageError(`could not reach the server at ${url}: ${(err as Error).message}`);
  }
  const answer = (await res.json().catch(() => ({}))) as { id?: string; sample_rate?: number; voices?: string[]; message?: string };
  if (!res.ok) throw new ModelsError(`not imported (${res.status}): ${answer.message ?? ''}`);
  write(`Imported ${answer.id} (${answer.sample_rate} Hz; voices: ${(answer.voices ?? []).join(', ')}): speak with "model_id": "${answer.id}".`);
}
