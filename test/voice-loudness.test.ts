/**
 * @module test/voice-loudness
 * Every voice at one loudness: the measured table of built-in eSpeak voices
 * matches a fresh measurement; every built-in voice on every embedded engine
 * (eSpeak NG, a sherpa-onnx model — the stand-in the tests write, in single-
 * and multi-speaker form — and the tone load-test engine) comes out within
 * ±1.5 dB of the −20 dBFS target on the same text, which is not the
 * reference passage;
 * OpenAI's default `alloy` is as loud as `nova`; `generation_config.volume`
 * applies on top of the voice's gain. A voice is measured only after a request
 * with it has been admitted: one refused by its rate limit runs no engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { knownGain, measureLevel, measurementsSettled } from '../src/synthesis/voice-gain.js';
import { espeakLanguageVoices, NAMED_VOICES } from '../src/voices/builtin.js';
import { levelDbfs, TARGET_DBFS } from '../src/voices/loudness.js';
import { ESPEAK_VOICE_LEVELS } from '../src/voices/loudness-table.js';
import type { Voice } from '../src/voices/voice.js';
import { removeRunDir, standInModel, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { newOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { startServer, type TestServer } from './helpers/server.js';

/** Not the reference passage: the gains must hold for other text too. */
const TEXT =
  'Please hold while I transfer your call to the billing department. ' +
  'Seventeen people visited the museum on a rainy Sunday morning in March, and most of them stayed for lunch.';

let server: TestServer;
let voices: Voice[];
before(async () => {
  server = await startServer({
    config: {
      engines: {
        espeak: { type: 'espeak', workers: 2 },
        tone: { type: 'tone', sampleRate: 24000 },
        piper: { type: 'sherpa-onnx', model: standInModel(), workers: 1 },
        'piper-multi': { type: 'sherpa-onnx', model: standInModel('multi', { speakers: 3 }), workers: 1 },
      } as never,
      models: {
        'tone-voices': { extends: 'omnivoice', engine: 'tone' },
        'piper-voices': { extends: 'omnivoice', engine: 'piper' },
        'piper-multi-voices': { extends: 'omnivoice', engine: 'piper-multi' },
      },
    },
  });
  voices = (await server.app.services.voices.list(null)).filter((v) => server.app.services.voices.isBuiltin(v.id));
}, { timeout: 60_000 });
after(async () => {
  await server?.close();
  removeRunDir();
});

/** Runs `work` over `items`, `width` at a time. */
async function eachLimited<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]);
      }
    }),
  );
  return results;
}

/** The level of `/tts/bytes` for a voice, as 32-bit float at the engine's own rate (nothing resampled or rounded). */
async function served(model: string, voice: string, sampleRate: number, extra: Record<string, unknown> = {}): Promise<number> {
  const response = await server.post('/tts/bytes', {
    model_id: model,
    transcript: TEXT,
    voice: { mode: 'id', id: voice },
    output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: sampleRate },
    ...extra,
  });
  assert.equal(response.status, 200, `${voice}: ${response.status}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  return levelDbfs(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
}

describe('the measured table', () => {
  test('has every built-in eSpeak voice, and each level matches a fresh measurement within 0.1 dB', { timeout: 180_000 }, async () => {
    const pool = new EspeakPool({ id: 'espeak', workers: 2, queueLimit: 1000, highWater: 32, logger: createLogger('silent') });
    await pool.start();
    try {
      const builtins = [...NAMED_VOICES, ...espeakLanguageVoices(pool.listedVoices)];
      const levels = await eachLimited(builtins, 2, async (voice) => [voice.id, Math.round((await measureLevel(pool, voice)) * 100) / 100] as const);
      const stale = levels.filter(([id, level]) => !(Math.abs((ESPEAK_VOICE_LEVELS[id] ?? Infinity) - level) <= 0.1));
      const extra = Object.keys(ESPEAK_VOICE_LEVELS).filter((id) => !builtins.some((v) => v.id === id));
      const fresh = levels.map(([id, level]) => `  ${/^[a-z]+$/.test(id) ? id : `'${id}'`}: ${level.toFixed(2)},`).join('\n');
      assert.deepEqual([stale, extra], [[], []], `src/voices/loudness-table.ts is out of date; measured now:\n${fresh}`);
    } finally {
      await pool.stop();
    }
  });
});

describe('one loudness', () => {
  test('every built-in voice on eSpeak NG is within ±1.5 dB of −20 dBFS on the same text', { timeout: 180_000 }, async () => {
    const espeak = server.app.services.engines.get('espeak')!;
    const spoken = voices.filter((v) => espeak.supportsVoice(v));
    assert.ok(spoken.length > 100, `${spoken.length} built-in voices`);
    const levels = await eachLimited(spoken, 3, async (voice) => ({ id: voice.id, level: await served('omnivoice', voice.id, 22050) }));
    const off = levels.filter(({ level }) => Math.abs(level - TARGET_DBFS) > 1.5).map(({ id, level }) => `${id} ${level.toFixed(2)}`);
    assert.deepEqual(off, []);
    // Before normalisation the same voices spread over 20 dB.
    const spread = Math.max(...levels.map((l) => l.level)) - Math.min(...levels.map((l) => l.level));
    assert.ok(spread <= 3, `spread ${spread.toFixed(2)} dB`);
  });

  test('every voice a sherpa-onnx model brings, and the named voices it speaks, are within ±1.5 dB of −20 dBFS', { timeout: 120_000 }, async () => {
    const named = new Set(NAMED_VOICES.map((v) => v.id));
    for (const [engineId, model] of [['piper', 'piper-voices'], ['piper-multi', 'piper-multi-voices']] as const) {
      const engine = server.app.services.engines.get(engineId)!;
      const own = voices.filter((v) => v.profiles['sherpa-onnx'] !== undefined && engine.supportsVoice(v));
      assert.ok(own.length >= (engineId === 'piper' ? 1 : 3), `${engineId} brings ${own.length} voices`);
      const spoken = [...own, ...voices.filter((v) => named.has(v.id) && engine.supportsVoice(v))];
      // Not measured yet: the first request of each voice is spoken at unity gain, and its end starts
      // the voice's measurement; the requests after it get the gain.
      assert.ok(spoken.every((voice) => knownGain(engine, voice) === null), 'no voice of the model is measured before it is used');
      await eachLimited(spoken, 2, (voice) => served(model, voice.id, STAND_IN_RATE));
      const unmeasured = () => spoken.filter((voice) => knownGain(engine, voice) === null).map((v) => v.id);
      await eventually(() => unmeasured().length === 0, 30_000);
      assert.deepEqual(unmeasured(), [], 'every voice used is measured');
      const levels = await eachLimited(spoken, 2, async (voice) => ({ id: voice.id, level: await served(model, voice.id, STAND_IN_RATE) }));
      const off = levels.filter(({ level }) => Math.abs(level - TARGET_DBFS) > 1.5).map(({ id, level }) => `${engineId}/${id} ${level.toFixed(2)}`);
      assert.deepEqual(off, []);
    }
  });

  test('every built-in voice on the tone engine is within ±1.5 dB of −20 dBFS', { timeout: 60_000 }, async () => {
    const levels = await eachLimited(voices, 4, async (voice) => ({ id: voice.id, level: await served('tone-voices', voice.id, 24000) }));
    const off = levels.filter(({ level }) => Math.abs(level - TARGET_DBFS) > 1.5).map(({ id, level }) => `${id} ${level.toFixed(2)}`);
    assert.deepEqual(off, []);
  });

  test('OpenAI clients: the default voice alloy is as loud as nova', { timeout: 30_000 }, async () => {
    const level = async (voice: string) => {
      const response = await server.post('/v1/audio/speech', { model: 'tts-1', voice, input: TEXT, response_format: 'pcm' });
      assert.equal(response.status, 200);
      const bytes = Buffer.from(await response.arrayBuffer());
      const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
      return levelDbfs(Float32Array.from(samples, (s) => s / 32767));
    };
    const [alloy, nova] = [await level('alloy'), await level('nova')];
    assert.ok(Math.abs(alloy - nova) <= 1.5, `alloy ${alloy.toFixed(2)} dB, nova ${nova.toFixed(2)} dB`);
    assert.ok(Math.abs(alloy - TARGET_DBFS) <= 1.5, `alloy ${alloy.toFixed(2)} dB`);
  });

  test('generation_config.volume applies on top of the voice gain', { timeout: 30_000 }, async () => {
    for (const voice of ['jordan', 'sarah']) {
      const plain = await served('omnivoice', voice, 22050);
      const half = await served('omnivoice', voice, 22050, { generation_config: { volume: 0.5 } });
      assert.ok(Math.abs(half - plain - 20 * Math.log10(0.5)) < 0.5, `${voice}: ${plain.toFixed(2)} → ${half.toFixed(2)} dB`);
    }
  });
});

describe('measured after admission, never before', () => {
  test('a request with a voice not measured yet, over its rate limit, is refused without the engine running; an admitted one starts the measurement once it has ended', { timeout: 60_000 }, async () => {
    const limited = await startServer({
      config: {
        accounts: { enabled: true },
        engines: { piper: { type: 'sherpa-onnx', model: standInModel('multi', { speakers: 2 }), workers: 1 } } as never,
        models: { 'piper-voices': { extends: 'omnivoice', engine: 'piper' } },
      },
    });
    try {
      const engine = limited.app.services.engines.get('piper')!;
      const synthesize = engine.synthesize.bind(engine);
      const texts: string[] = [];
      engine.synthesize = (input, signal) => (texts.push(input.text), synthesize(input, signal));
      const [first, second] = (await limited.app.services.voices.list(null)).filter((v) => v.profiles['sherpa-onnx'] !== undefined && engine.supportsVoice(v));
      const org = await newOrg(limited, { rateLimit: { requests: 1, per_seconds: 3600 } });
      const speak = (voice: string) =>
        limited.post('/tts/bytes', { model_id: 'piper-voices', transcript: 'Hello there.', voice: { mode: 'id', id: voice }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE } }, org.auth);
      // The one request the limit allows: admitted, spoken, and its voice measured after it.
      assert.equal((await speak(first.id)).status, 200);
      assert.ok(await eventually(() => knownGain(engine, first) !== null, 30_000), 'the admitted voice is measured');
      const before = texts.length;
      // Over the limit with a voice nobody has measured: refused, and the engine makes nothing.
      const refused = await speak(second.id);
      assert.equal(refused.status, 429);
      await measurementsSettled(engine);
      assert.deepEqual(texts.slice(before), [], 'the engine ran for a refused request');
      assert.equal(knownGain(engine, second), null);
    } finally {
      await limited.close();
    }
  });
});
