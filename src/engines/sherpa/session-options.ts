/**
 * @module engines/sherpa/session-options
 * onnxruntime session options for every sherpa-onnx model. sherpa-onnx takes
 * them from a file named in its provider string (`cpu:<file>`, one
 * `key=value` a line); this module writes that file and names it.
 *
 * The one option set is `EnableMemPattern=0`. With onnxruntime's memory
 * pattern on, a call whose inputs have the shape of an earlier call's (the
 * same sentence again, or any with as many phonemes) takes all of its
 * intermediate tensors as one block, which the session's arena has to grow a
 * new region for and then keeps: a worker that has spoken a 6.6 s sentence
 * twice holds ≈ 300 MiB instead of ≈ 220 MiB (vits-proxy-medium, docs/benchmarks-history.md
 * "Neural serving"). Speech models' shapes change with every text, so the
 * pattern saves nothing measurable there (same audio per CPU second). The
 * arena itself stays on: without it every tensor is a fresh `mmap`, and the
 * same model made a third of the audio per CPU second.
 *
 * sherpa-onnx ends its whole process when the file named is missing, so every
 * worker writes it again before it loads its model (`ensureSessionOptions`),
 * not only the engine at start: a replaced worker still loads after the file
 * was removed (a temporary folder cleaned, say).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The file's content. */
export const SESSION_OPTIONS = '# onnxruntime session options for sherpa-onnx (written by Voicegate)\nEnableMemPattern=0\n';

/** What a worker needs to load with the options: the file, and what it must hold. */
export interface SessionOptionsFile {
  path: string;
  text: string;
}

/** The provider string that makes sherpa-onnx read `path` (CPU inference). */
export function providerWith(path: string): string {
  return `cpu:${path}`;
}

/**
 * The provider a model loads with: `cpu:<file>` once the file holds the options, plain `cpu` (the
 * memory pattern on, the model otherwise the same) when it cannot be written, so that a read-only
 * or vanished folder costs memory, never the process.
 */
export function providerFor(file: SessionOptionsFile, onFailure: (err: unknown) => void = () => {}): string {
  try {
    ensureSessionOptions(file);
    return providerWith(file.path);
  } catch (err) {
    onFailure(err);
    return 'cpu';
  }
}

/** Writes the file unless it already holds `text` (written whole, then renamed into place). */
export function ensureSessionOptions(file: SessionOptionsFile): void {
  try {
    if (readFileSync(file.path, 'utf8') === file.text) return;
  } catch {
    // missing or unreadable: written below
  }
  mkdirSync(dirname(file.path), { recursive: true });
  const temporary = `${file.path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temporary, file.text);
  renameSync(temporary, file.path);
}
