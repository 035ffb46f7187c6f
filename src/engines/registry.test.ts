/**
 * @module engines/registry.test
 * Engine types come from their registrations: every listed type is in the
 * config union with its own defaults, the factory builds that type's engine
 * from a parsed entry, and the registry gathers the voices engines bring.
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
  assert.deepEqual(types, ['espeak', 'tone', 'openai-upstream', 'cartesia-upstream']);
  assert.equal(new Set(types).size, types.length, 'one registration per type');
  for (const type of types) {
    const config = engineConfigSchema.parse(type.endsWith('-upstream') ? { type, ...upstream } : { type });
    assert.equal(config.type, type);
    const engine = createEngine(`my-${type}`, config, context);
    assert.equal(engine.type, type);
    assert.equal(engine.id, `my-${type}`);
  }
  assert.throws(() => engineConfigSchema.parse({ type: 'nope' }));
  assert.throws(() => engineConfigSchema.parse({ type: 'tone', extra: 1 }), 'entries are strict');
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
