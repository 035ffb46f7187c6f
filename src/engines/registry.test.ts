/**
 * @module engines/registry.test
 * Engine types come from their registrations: every listed type is in the
 * config union with its own defaults, the factory builds that type's engine
 * from a parsed entry, the registry gathers the voices engines bring, and an
 * engine that cannot start degrades to a failed one instead of failing all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import { ENGINE_TYPES, engineConfigSchema } from './engine-types.js';
import { createEngine, EngineRegistry } from './registry.js';

const context = { logger: createLogger('silent') };
const upstream = { upstreams: [{ url: 'http://127.0.0.1:9' }], model: 'm', sampleRate: 24000 };

test('each registration is one member of the config union, and the factory makes its type', () => {
  const types = ENGINE_TYPES.map((r) => r.type);
  assert.deepEqual(types, ['espeak', 'tone', 'openai-upstream', 'cartesia-upstream', 'elevenlabs-upstream', 'deepgram-upstream', 'sherpa-onnx']);
  assert.equal(new Set(types).size, types.length, 'one registration per type');
  for (const type of types) {
    const config = engineConfigSchema.parse(type.endsWith('-upstream') ? { type, ...upstream } : type === 'sherpa-onnx' ? { type, model: '/models/x' } : { type });
    assert.equal(config.type, type);
    const engine = createEngine(`my-${type}`, config, context);
    assert.equal(engine.type, type);
    assert.equal(engine.id, `my-${type}`);
  }
  assert.throws(() => engineConfigSchema.parse({ type: 'nope' }));
  assert.throws(() => engineConfigSchema.parse({ type: 'tone', extra: 1 }), 'entries are strict');
});

test('an upstream key may come from the environment; unset, the engine does not start and the error names the variable, never a key', () => {
  const config = engineConfigSchema.parse({ type: 'elevenlabs-upstream', upstreams: [{ url: 'http://127.0.0.1:9', apiKeyEnv: 'VG_UNIT_UPSTREAM_KEY' }], model: 'eleven_flash_v2_5' });
  assert.ok(config.type === 'elevenlabs-upstream' && config.sampleRate === 24000 && config.healthPath === '/v1/models');
  assert.throws(() => createEngine('eleven', config, context), /VG_UNIT_UPSTREAM_KEY/);
  process.env.VG_UNIT_UPSTREAM_KEY = 'secret';
  try {
    assert.equal(createEngine('eleven', config, context).type, 'elevenlabs-upstream');
  } finally {
    delete process.env.VG_UNIT_UPSTREAM_KEY;
  }
  assert.throws(() => engineConfigSchema.parse({ type: 'deepgram-upstream', upstreams: [{ url: 'http://127.0.0.1:9', apiKey: 'k', apiKeyEnv: 'K' }] }), /not both/);
  assert.throws(() => engineConfigSchema.parse({ type: 'deepgram-upstream', upstreams: [{ url: 'http://127.0.0.1:9' }], sampleRate: 22050 }), /sampleRate/);
});

test('eSpeak entries get the pool deadlines by default; the engine honours configured ones', () => {
  const config = engineConfigSchema.parse({ type: 'espeak', workers: 1 });
  assert.ok(config.type === 'espeak' && config.queueTimeoutMs === 10_000 && config.jobTimeoutMs === 120_000);
  assert.throws(() => engineConfigSchema.parse({ type: 'espeak', jobTimeoutMs: 10 }), /jobTimeoutMs/);
});

test('the registry creates only bound engines and gathers the built-in voices engines bring', { timeout: 20_000 }, async () => {
  const configs = { espeak: engineConfigSchema.parse({ type: 'espeak', workers: 1 }), tone: engineConfigSchema.parse({ type: 'tone' }) };
  const registry = new EngineRegistry(configs, new Set(['espeak']), context);
  assert.deepEqual(registry.list().map((e) => e.id), ['espeak']);
  await registry.start();
  try {
    const voices = registry.builtinVoices();
    assert.ok(voices.length > 50 && voices.every((v) => v.id.startsWith('espeak-')), `${voices.length} voices`);
  } finally {
    await registry.stop();
  }
  assert.deepEqual(new EngineRegistry(configs, new Set(['tone']), context).builtinVoices(), [], 'the tone engine brings none');
});

test('an engine that cannot start is kept as a failed engine with its reason; the others serve and the registry is ready', { timeout: 20_000 }, async () => {
  const configs = {
    broken: engineConfigSchema.parse({ type: 'sherpa-onnx', model: '/nonexistent/voicegate-model' }),
    tone: engineConfigSchema.parse({ type: 'tone' }),
  };
  const registry = new EngineRegistry(configs, new Set(['broken', 'tone']), context);
  await registry.start();
  try {
    const broken = registry.get('broken')!;
    assert.equal(broken.isReady(), false);
    assert.match(String(broken.info().error), /does not exist/);
    assert.deepEqual(registry.failures().map((f) => f.id), ['broken']);
    assert.equal(registry.get('tone')!.isReady(), true);
    assert.equal(registry.allReady(), true, 'a failed engine does not make the server unready');
    await assert.rejects(async () => {
      for await (const _ of broken.synthesize({ text: 'x', voice: undefined as never, speed: 1, wordTimings: false }, new AbortController().signal));
    }, (err: unknown) => (err as { code?: string }).code === 'engine_unavailable');
  } finally {
    await registry.stop();
  }
});
