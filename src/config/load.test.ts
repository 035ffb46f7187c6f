/** @module config/load.test — defaults, file, environment precedence and clear failures. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './load.js';

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'voicegate-config-')), 'config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

test('an empty configuration serves with the embedded defaults', () => {
  const config = loadConfig({ env: {} });
  assert.equal(config.server.port, 8080);
  assert.equal(config.server.host, '127.0.0.1');
  assert.equal(config.server.bodyLimitBytes, 65536);
  assert.equal(config.dataDir, './data');
  assert.equal(config.engines.espeak.type, 'espeak');
  assert.equal(config.engines.tone.type, 'tone');
});

test('file < VOICEGATE_* < nothing; PORT/HOST are honoured, VOICEGATE_PORT wins over PORT', () => {
  const path = file({ server: { port: 9000 }, dataDir: '/srv/a', engines: { espeak: { workers: 3 } } });
  assert.equal(loadConfig({ file: path, env: {} }).server.port, 9000);
  assert.equal(loadConfig({ file: path, env: { PORT: '9100' } }).server.port, 9100);
  assert.equal(loadConfig({ file: path, env: { PORT: '9100', VOICEGATE_PORT: '9200' } }).server.port, 9200);
  const config = loadConfig({ file: path, env: { HOST: '0.0.0.0', VOICEGATE_DATA_DIR: '/srv/b', VOICEGATE_ESPEAK_WORKERS: '4' } });
  assert.equal(config.server.host, '0.0.0.0');
  assert.equal(config.dataDir, '/srv/b');
  assert.equal(config.engines.espeak.type === 'espeak' && config.engines.espeak.workers, 4);
  assert.equal(config.engines.espeak.type === 'espeak' && config.engines.espeak.splitFirstSentence, true);
  const whole = loadConfig({ file: path, env: { VOICEGATE_ESPEAK_SPLIT_FIRST_SENTENCE: 'false' } });
  assert.equal(whole.engines.espeak.type === 'espeak' && whole.engines.espeak.splitFirstSentence, false);
});

test('bad configuration fails with the field named', () => {
  assert.throws(() => loadConfig({ env: { PORT: 'eighty' } }), (e: unknown) => e instanceof ConfigError && /PORT must be a number/.test(e.message));
  assert.throws(() => loadConfig({ file: file({ server: { port: -1 } }), env: {} }), /server\.port/);
  assert.throws(() => loadConfig({ file: file({ sever: {} }), env: {} }), ConfigError);
  assert.throws(() => loadConfig({ file: file('{not json'), env: {} }), /cannot read config file/);
  assert.throws(() => loadConfig({ file: '/nonexistent/voicegate.json', env: {} }), /cannot read config file/);
  assert.throws(() => loadConfig({ file: file({ engines: { espeak: { type: 'espeak', workers: 0 } } }), env: {} }), /engines\.espeak\.workers/);
});

test('VOICEGATE_DATABASE_URL selects PostgreSQL; unset keeps SQLite; bad values name the field', () => {
  assert.deepEqual(loadConfig({ env: {} }).store, { databaseUrl: null, schema: null, poolSize: 10, timeoutMs: 5000, startupWaitMs: 60_000 });
  const config = loadConfig({ env: { VOICEGATE_DATABASE_URL: 'postgres://app:secret@db:5432/voicegate', VOICEGATE_DATABASE_SCHEMA: 'tenant_a' } });
  assert.equal(config.store.databaseUrl, 'postgres://app:secret@db:5432/voicegate');
  assert.equal(config.store.schema, 'tenant_a');
  assert.equal(loadConfig({ file: file({ store: { databaseUrl: 'postgresql://db/x', timeoutMs: 2000 } }), env: {} }).store.timeoutMs, 2000);
  assert.throws(() => loadConfig({ env: { VOICEGATE_DATABASE_URL: 'mysql://db/x' } }), /store\.databaseUrl/);
  assert.throws(() => loadConfig({ env: { VOICEGATE_DATABASE_SCHEMA: 'Robert"; DROP' } }), /store\.schema/);
});

test('metrics: on the main port behind the admin token by default; env makes them public or moves them', () => {
  assert.deepEqual(loadConfig({ env: {} }).metrics, { enabled: true, public: false, port: null, host: null });
  const moved = loadConfig({ env: { VOICEGATE_METRICS_PORT: '9464', VOICEGATE_METRICS_HOST: '0.0.0.0', VOICEGATE_METRICS_PUBLIC: 'on' } }).metrics;
  assert.deepEqual(moved, { enabled: true, public: true, port: 9464, host: '0.0.0.0' });
  assert.equal(loadConfig({ env: { VOICEGATE_METRICS: 'off' } }).metrics.enabled, false);
  assert.throws(() => loadConfig({ env: { VOICEGATE_METRICS_PORT: '70000' } }), /metrics\.port/);
  assert.throws(() => loadConfig({ env: { VOICEGATE_METRICS_PUBLIC: 'maybe' } }), /VOICEGATE_METRICS_PUBLIC must be on or off/);
});

test('redis: unset by default (in-process counters); URL, prefix and lease TTL from the environment, checked', () => {
  assert.deepEqual(loadConfig({ env: {} }).redis, { url: null, keyPrefix: 'voicegate:', leaseTtlMs: 15_000, timeoutMs: 1000 });
  const config = loadConfig({ env: { VOICEGATE_REDIS_URL: 'redis://:secret@cache:6380/2', VOICEGATE_REDIS_KEY_PREFIX: 'tts-eu:', VOICEGATE_REDIS_LEASE_TTL_MS: '5000' } });
  assert.deepEqual(config.redis, { url: 'redis://:secret@cache:6380/2', keyPrefix: 'tts-eu:', leaseTtlMs: 5000, timeoutMs: 1000 });
  assert.equal(loadConfig({ env: { VOICEGATE_REDIS_URL: 'rediss://cache.example:6380' } }).redis.url, 'rediss://cache.example:6380');
  assert.throws(() => loadConfig({ env: { VOICEGATE_REDIS_URL: 'http://cache:6379' } }), /redis\.url/);
  assert.throws(
    () => loadConfig({ env: { VOICEGATE_REDIS_URL: 'redis:/cache' } }),
    (e: unknown) => e instanceof ConfigError && /redis\.url/.test(e.message) && !e.message.includes('cache'),
  );
  assert.throws(() => loadConfig({ env: { VOICEGATE_REDIS_LEASE_TTL_MS: '60000' } }), /redis\.leaseTtlMs/);
});

test('cache: the shared tier is on by default (used with redis.url), off from the environment; its limits checked', () => {
  const cache = loadConfig({ env: {} }).cache;
  assert.deepEqual([cache.shared, cache.sharedMaxEntryBytes, cache.sharedTtlSeconds, cache.sharedTimeoutMs], [true, 1024 * 1024, 7 * 24 * 3600, 250]);
  assert.equal(loadConfig({ env: { VOICEGATE_CACHE_SHARED: 'off' } }).cache.shared, false);
  assert.throws(() => loadConfig({ env: { VOICEGATE_CACHE_SHARED: 'sometimes' } }), /VOICEGATE_CACHE_SHARED must be on or off/);
});

test('limits: local counting when Redis fails by default; refuse and the expected gateways from the environment, checked', () => {
  assert.deepEqual(loadConfig({ env: {} }).limits, { whenSharedCountersFail: 'local', expectedGateways: null });
  const config = loadConfig({ env: { VOICEGATE_LIMITS_WHEN_SHARED_COUNTERS_FAIL: 'refuse', VOICEGATE_LIMITS_EXPECTED_GATEWAYS: '3' } });
  assert.deepEqual(config.limits, { whenSharedCountersFail: 'refuse', expectedGateways: 3 });
  assert.throws(() => loadConfig({ env: { VOICEGATE_LIMITS_WHEN_SHARED_COUNTERS_FAIL: 'ignore' } }), /limits\.whenSharedCountersFail/);
  assert.throws(() => loadConfig({ env: { VOICEGATE_LIMITS_EXPECTED_GATEWAYS: '0' } }), /limits\.expectedGateways/);
});

test('VOICEGATE_PULL binds each model to an engine of its own and the shipped model ids to the first; the config file wins', () => {
  const config = loadConfig({ env: { VOICEGATE_PULL: 'vits-piper-en_US-lessac-medium, kokoro-en-v0_19=/archives/kokoro.tar.bz2', VOICEGATE_DATA_DIR: '/var/lib/voicegate' } });
  assert.deepEqual(config.pull, ['vits-piper-en_US-lessac-medium', 'kokoro-en-v0_19=/archives/kokoro.tar.bz2']);
  const piper = config.engines['vits-piper-en_US-lessac-medium'] as { type: string; model: string; defaultSpeaker?: number };
  assert.equal(piper.type, 'sherpa-onnx');
  assert.equal(piper.model, '/var/lib/voicegate/models/vits-piper-en_US-lessac-medium');
  assert.equal((config.engines['kokoro-en-v0_19'] as { model: string }).model, '/var/lib/voicegate/models/kokoro-en-v0_19');
  assert.equal(config.models['gepard-1.0'].engine, 'vits-piper-en_US-lessac-medium');
  assert.equal(config.models.omnivoice.engine, 'vits-piper-en_US-lessac-medium');
  assert.deepEqual(config.models['kokoro-en-v0_19'], { extends: 'gepard-1.0', engine: 'kokoro-en-v0_19' });
  // A binding the file makes itself stays.
  const kept = loadConfig({ file: file({ models: { omnivoice: { engine: 'espeak' } } }), env: { VOICEGATE_PULL: 'vits-piper-en_US-lessac-medium' } });
  assert.equal(kept.models.omnivoice.engine, 'espeak');
  assert.equal(kept.models['gepard-1.0'].engine, 'vits-piper-en_US-lessac-medium');
  assert.deepEqual(loadConfig({ env: {} }).pull, []);
  assert.throws(() => loadConfig({ env: { VOICEGATE_PULL: 'a/../b' } }), /pull: "a\/\.\.\/b" is not a model name/);
  assert.throws(() => loadConfig({ env: { VOICEGATE_PULL: 'x=' } }), /pull: x= needs an archive/);
});

test('drain delay and the database wait from the environment, bounded', () => {
  assert.equal(loadConfig({ env: {} }).server.drainDelayMs, 0);
  assert.equal(loadConfig({ env: { VOICEGATE_DRAIN_DELAY_MS: '5000' } }).server.drainDelayMs, 5000);
  assert.throws(() => loadConfig({ env: { VOICEGATE_DRAIN_DELAY_MS: '-1' } }), /server\.drainDelayMs/);
  assert.equal(loadConfig({ env: { VOICEGATE_DATABASE_WAIT_MS: '0' } }).store.startupWaitMs, 0);
});
