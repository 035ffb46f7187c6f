/**
 * @module config/load
 * Builds the running configuration: defaults ← the JSON file given by
 * `--config` ← `VOICEGATE_*` environment variables (and the conventional
 * `PORT` / `HOST`), as the sections and engine types declare them
 * (`schema.ts` `ENVIRONMENT`). Invalid configuration stops start-up with a message
 * naming the offending field.
 */
import { readFileSync } from 'node:fs';
import { bindPulled, parsePullSpec, type PullSpec } from './pull.js';
import type { EnvKind } from './section.js';
import { configSchema, DEFAULT_DATA_DIR, ENVIRONMENT, type Config } from './schema.js';

const BOOLEANS: Record<string, boolean> = { true: true, on: true, '1': true, yes: true, false: false, off: false, '0': false, no: false };

function parseEnv(name: string, value: string, kind: EnvKind): unknown {
  if (kind === 'string') return value;
  if (kind === 'list') return value.split(',').map((item) => item.trim()).filter(Boolean);
  if (kind === 'boolean') {
    // `auto` is passed on for the settings that take it (`VOICEGATE_JOBS`); the others' schemas refuse it.
    if (value.toLowerCase() === 'auto') return 'auto';
    const parsed = BOOLEANS[value.toLowerCase()];
    if (parsed === undefined) throw new ConfigError(`${name} must be on or off; got ${JSON.stringify(value)}`);
    return parsed;
  }
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new ConfigError(`${name} must be a number; got ${JSON.stringify(value)}`);
  return parsed;
}

export class ConfigError extends Error {}

/**
 * `server.tls` from `VOICEGATE_TLS_CERT` + `VOICEGATE_TLS_KEY`, or
 * `VOICEGATE_TLS=self-signed` (`off` turns a configured TLS off). It replaces
 * the file's whole `tls` object, since its two shapes do not mix.
 */
function tlsFromEnv(env: NodeJS.ProcessEnv): { value: unknown } | null {
  const cert = env.VOICEGATE_TLS_CERT || undefined;
  const key = env.VOICEGATE_TLS_KEY || undefined;
  const mode = env.VOICEGATE_TLS || undefined;
  if (cert || key) {
    if (!cert || !key) throw new ConfigError('VOICEGATE_TLS_CERT and VOICEGATE_TLS_KEY must be set together');
    if (mode) throw new ConfigError('set either VOICEGATE_TLS or VOICEGATE_TLS_CERT/VOICEGATE_TLS_KEY, not both');
    return { value: { cert, key } };
  }
  if (mode === undefined) return null;
  if (mode === 'self-signed') return { value: { selfSigned: true } };
  if (mode === 'off') return { value: null };
  throw new ConfigError(`VOICEGATE_TLS must be self-signed or off; got ${JSON.stringify(mode)}`);
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const child = node[key];
    if (typeof child !== 'object' || child === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

/** Adds the default engines unless the config defines engines of those ids itself. */
function withDefaultEngines(raw: Record<string, unknown>): void {
  const engines = (raw.engines ?? {}) as Record<string, Record<string, unknown>>;
  engines.espeak = { type: 'espeak', ...engines.espeak };
  engines.tone = { type: 'tone', ...engines.tone };
  raw.engines = engines;
}

/** `pull`'s entries, checked here so that a bad one names the entry. */
function pullSpecs(pull: unknown): PullSpec[] {
  if (pull === undefined) return [];
  if (!Array.isArray(pull) || pull.some((item) => typeof item !== 'string')) throw new ConfigError('invalid configuration at pull: a list of model names (name or name=<archive file or URL>)');
  return pull.map((item: string) => {
    const spec = parsePullSpec(item);
    if (typeof spec === 'string') throw new ConfigError(`invalid configuration at pull: ${spec}`);
    return spec;
  });
}

export function loadConfig(
  options: { file?: string; env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown>; /** `--tls self-signed`, over file and env. */ tls?: 'self-signed' } = {},
): Config {
  const env = options.env ?? process.env;
  let raw: Record<string, unknown> = {};
  if (options.file) {
    try {
      raw = JSON.parse(readFileSync(options.file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`cannot read config file ${options.file}: ${(err as Error).message}`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`config file ${options.file} must hold a JSON object`);
  }
  for (const { name, path, kind } of ENVIRONMENT) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, path, parseEnv(name, value, kind));
  }
  const tls = options.tls === 'self-signed' ? { value: { selfSigned: true } } : tlsFromEnv(env);
  if (tls) setPath(raw, ['server', 'tls'], tls.value);
  for (const [key, value] of Object.entries(options.overrides ?? {})) raw[key] = value;
  bindPulled(raw, pullSpecs(raw.pull), typeof raw.dataDir === 'string' ? raw.dataDir : DEFAULT_DATA_DIR);
  withDefaultEngines(raw);
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`invalid configuration at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const { jobs, ...rest } = result.data;
  // Wyoming has no authentication: the listener speaks as one key, which accounts need to charge.
  if (rest.wyoming.port !== null && rest.accounts.enabled && !rest.wyoming.apiKey) {
    throw new ConfigError('invalid configuration at wyoming.port: with accounts on, the Wyoming listener needs an API key to speak as: set VOICEGATE_WYOMING_API_KEY (wyoming.apiKey)');
  }
  // Jobs on `auto` run when their storage is shared by construction: a bucket.
  return { ...rest, jobs: { ...jobs, enabled: jobs.enabled === 'auto' ? rest.storage.kind === 's3' : jobs.enabled } };
}
