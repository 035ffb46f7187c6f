/**
 * @module config/load
 * Builds the running configuration: defaults ← the JSON file given by
 * `--config` ← `VOICEGATE_*` environment variables (and the conventional
 * `PORT` / `HOST`). Invalid configuration stops start-up with a message
 * naming the offending field.
 */
import { readFileSync } from 'node:fs';
import { bindPulled, parsePullSpec, type PullSpec } from './pull.js';
import { configSchema, DEFAULT_DATA_DIR, type Config } from './schema.js';

/** Environment variables and the config path each one sets. */
const ENV_PATHS: [string, string[], 'number' | 'string' | 'boolean' | 'list'][] = [
  ['PORT', ['server', 'port'], 'number'],
  ['HOST', ['server', 'host'], 'string'],
  ['VOICEGATE_PORT', ['server', 'port'], 'number'],
  ['VOICEGATE_HOST', ['server', 'host'], 'string'],
  ['VOICEGATE_BODY_LIMIT_BYTES', ['server', 'bodyLimitBytes'], 'number'],
  ['VOICEGATE_SHUTDOWN_GRACE_MS', ['server', 'shutdownGraceMs'], 'number'],
  ['VOICEGATE_DRAIN_DELAY_MS', ['server', 'drainDelayMs'], 'number'],
  ['VOICEGATE_WARM_UP', ['server', 'warmUp'], 'boolean'],
  ['VOICEGATE_PULL', ['pull'], 'list'],
  ['VOICEGATE_DATA_DIR', ['dataDir'], 'string'],
  ['VOICEGATE_DATABASE_URL', ['store', 'databaseUrl'], 'string'],
  ['VOICEGATE_DATABASE_SCHEMA', ['store', 'schema'], 'string'],
  ['VOICEGATE_DATABASE_WAIT_MS', ['store', 'startupWaitMs'], 'number'],
  ['VOICEGATE_LOG_LEVEL', ['log', 'level'], 'string'],
  ['VOICEGATE_ESPEAK_WORKERS', ['engines', 'espeak', 'workers'], 'number'],
  ['VOICEGATE_ESPEAK_QUEUE_LIMIT', ['engines', 'espeak', 'queueLimit'], 'number'],
  ['VOICEGATE_ESPEAK_SPLIT_FIRST_SENTENCE', ['engines', 'espeak', 'splitFirstSentence'], 'boolean'],
  ['VOICEGATE_ESPEAK_WARM_UP_JOBS', ['engines', 'espeak', 'warmUpJobs'], 'number'],
  ['VOICEGATE_ACCOUNTS', ['accounts', 'enabled'], 'boolean'],
  ['VOICEGATE_ADMIN_TOKEN', ['accounts', 'adminToken'], 'string'],
  ['VOICEGATE_TOKEN_SECRET', ['accounts', 'tokenSecret'], 'string'],
  ['VOICEGATE_STARTING_CREDITS', ['accounts', 'startingCredits'], 'number'],
  ['VOICEGATE_USD_PER_MILLION_CREDITS', ['accounts', 'usdPerMillionCredits'], 'number'],
  ['VOICEGATE_COST_HEADER_PREFIX', ['accounts', 'costHeaderAliasPrefix'], 'string'],
  ['VOICEGATE_RESERVATION_TTL_MS', ['accounts', 'reservationTtlMs'], 'number'],
  ['VOICEGATE_METRICS', ['metrics', 'enabled'], 'boolean'],
  ['VOICEGATE_METRICS_PUBLIC', ['metrics', 'public'], 'boolean'],
  ['VOICEGATE_METRICS_PORT', ['metrics', 'port'], 'number'],
  ['VOICEGATE_METRICS_HOST', ['metrics', 'host'], 'string'],
  ['VOICEGATE_REDIS_URL', ['redis', 'url'], 'string'],
  ['VOICEGATE_REDIS_KEY_PREFIX', ['redis', 'keyPrefix'], 'string'],
  ['VOICEGATE_REDIS_LEASE_TTL_MS', ['redis', 'leaseTtlMs'], 'number'],
  ['VOICEGATE_LIMITS_WHEN_SHARED_COUNTERS_FAIL', ['limits', 'whenSharedCountersFail'], 'string'],
  ['VOICEGATE_LIMITS_EXPECTED_GATEWAYS', ['limits', 'expectedGateways'], 'number'],
  ['VOICEGATE_JOBS', ['jobs', 'enabled'], 'boolean'],
  ['VOICEGATE_JOBS_DIR', ['jobs', 'dir'], 'string'],
  ['VOICEGATE_JOBS_CONCURRENCY', ['jobs', 'concurrency'], 'number'],
  ['VOICEGATE_JOBS_RETENTION_HOURS', ['jobs', 'retentionHours'], 'number'],
  ['VOICEGATE_WEBHOOK_SECRET', ['jobs', 'webhooks', 'secret'], 'string'],
  ['VOICEGATE_WEBHOOKS_ALLOW_PRIVATE_NETWORKS', ['jobs', 'webhooks', 'allowPrivateNetworks'], 'boolean'],
  ['VOICEGATE_CACHE', ['cache', 'enabled'], 'boolean'],
  ['VOICEGATE_CACHE_MEMORY_BYTES', ['cache', 'memoryBytes'], 'number'],
  ['VOICEGATE_CACHE_DISK_BYTES', ['cache', 'diskBytes'], 'number'],
  ['VOICEGATE_CACHE_BILL_HITS', ['cache', 'billHits'], 'boolean'],
  ['VOICEGATE_CACHE_SHARED', ['cache', 'shared'], 'boolean'],
];

const BOOLEANS: Record<string, boolean> = { true: true, on: true, '1': true, yes: true, false: false, off: false, '0': false, no: false };

function parseEnv(name: string, value: string, kind: 'number' | 'string' | 'boolean' | 'list'): unknown {
  if (kind === 'string') return value;
  if (kind === 'list') return value.split(',').map((item) => item.trim()).filter(Boolean);
  if (kind === 'boolean') {
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

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
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
  for (const [name, path, kind] of ENV_PATHS) {
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
  return result.data;
}
