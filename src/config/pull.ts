/**
 * @module config/pull
 * `pull` (`VOICEGATE_PULL`): local neural models a server installs into
 * `<dataDir>/models/<name>` on its first start and serves. Each entry is a
 * catalogue id, or `name=<archive file or URL>`. Loading the config binds
 * them: each becomes a `sherpa-onnx` engine and a model of its own id, and the
 * first also serves the shipped model ids (`gepard-1.0`, `omnivoice`, `voicegate-1.0`) unless
 * the config binds those itself. Installing is the serve command's job,
 * before any engine starts.
 */
import { join } from 'node:path';

export interface PullSpec {
  name: string;
  /** An archive file or URL to install from instead of the catalogue's. */
  from?: string;
}

/** The shipped model ids the first pulled model serves. */
export const DEFAULT_MODEL_IDS = ['gepard-1.0', 'omnivoice', 'voicegate-1.0'] as const;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Reads one entry; returns a message for one that is not `name` or `name=source`. */
export function parsePullSpec(entry: string): PullSpec | string {
  const at = entry.indexOf('=');
  const name = (at < 0 ? entry : entry.slice(0, at)).trim();
  const from = at < 0 ? undefined : entry.slice(at + 1).trim();
  if (!NAME.test(name) || name.includes('..')) return `${JSON.stringify(name)} is not a model name (letters, digits, ".", "_", "-")`;
  if (from === '') return `${name}= needs an archive file or URL after the =`;
  return from === undefined ? { name } : { name, from };
}

export const modelDir = (dataDir: string, name: string): string => join(dataDir, 'models', name);

/**
 * Adds the engines and models of `pull` to a raw config (before validation);
 * what the config sets itself wins.
 */
export function bindPulled(raw: Record<string, unknown>, specs: PullSpec[], dataDir: string): void {
  if (specs.length === 0) return;
  const engines = (raw.engines ?? {}) as Record<string, Record<string, unknown>>;
  const models = (raw.models ?? {}) as Record<string, Record<string, unknown>>;
  for (const { name } of specs) {
    // A multi-speaker model speaks every voice as its first speaker; a single-speaker one ignores it.
    engines[name] ??= { type: 'sherpa-onnx', model: modelDir(dataDir, name), defaultSpeaker: 0 };
    models[name] ??= { extends: 'gepard-1.0', engine: name };
  }
  for (const id of DEFAULT_MODEL_IDS) {
    if (models[id]?.engine === undefined) models[id] = { ...models[id], engine: specs[0].name };
  }
  raw.engines = engines;
  raw.models = models;
}
