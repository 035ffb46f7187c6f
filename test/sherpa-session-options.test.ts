/**
 * @module test/sherpa-session-options
 * The onnxruntime session options every sherpa-onnx model loads with
 * (`engines/sherpa/session-options`): the file is written where the engine is
 * told, its provider string names it, the model loads and speaks with it, and
 * a worker replaced after the file was removed writes it again before it
 * loads (sherpa-onnx would end the whole process on a missing file). On the
 * stand-in Piper model the test writes itself.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SherpaEngine } from '../src/engines/sherpa/engine.js';
import { detectLayout, sherpaConfig } from '../src/engines/sherpa/layout.js';
import { ensureSessionOptions, providerWith, SESSION_OPTIONS } from '../src/engines/sherpa/session-options.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { createLogger } from '../src/log/logger.js';
import { eventually } from './helpers/redis.js';
import { removeRunDir, runDir, standInModel } from './helpers/sherpa-model.js';

after(() => removeRunDir());

async function speak(engine: SherpaEngine, text: string): Promise<number> {
  let samples = 0;
  for await (const chunk of engine.synthesize({ text, voice: NAMED_VOICES[0], speed: 1, wordTimings: false }, new AbortController().signal)) samples += chunk.samples.length;
  return samples;
}

test('the options file: written when missing or different, left alone when it holds the options', () => {
  const path = join(runDir(), 'options', 'session.conf');
  ensureSessionOptions({ path, text: SESSION_OPTIONS });
  assert.equal(readFileSync(path, 'utf8'), SESSION_OPTIONS);
  assert.match(SESSION_OPTIONS, /^EnableMemPattern=0$/m);
  const written = statSync(path).mtimeMs;
  ensureSessionOptions({ path, text: SESSION_OPTIONS });
  assert.equal(statSync(path).mtimeMs, written, 'a file that already holds the options is not written again');
  writeFileSync(path, 'EnableMemPattern=1\n');
  ensureSessionOptions({ path, text: SESSION_OPTIONS });
  assert.equal(readFileSync(path, 'utf8'), SESSION_OPTIONS);
});

test('the provider string names the file for CPU inference', () => {
  const layout = detectLayout(standInModel());
  assert.equal(sherpaConfig(layout, { numThreads: 1, provider: providerWith('/data/sherpa.conf') }).model.provider, 'cpu:/data/sherpa.conf');
  assert.equal(sherpaConfig(layout, { numThreads: 1 }).model.provider, 'cpu');
});

test('the engine loads with the options; a worker replaced after the file is gone writes it again', { timeout: 60_000 }, async () => {
  const sessionOptionsPath = join(runDir(), 'engine-options', 'sherpa-onnx-session.conf');
  const engine = new SherpaEngine({
    id: 'piper',
    model: standInModel(),
    numThreads: 1,
    workers: 1,
    queueLimit: 4,
    highWater: 4,
    voices: {},
    espeakDataDir: join(runDir(), 'espeak-ng-data'),
    sessionOptionsPath,
    logger: createLogger('silent'),
  });
  await engine.start();
  try {
    assert.equal(readFileSync(sessionOptionsPath, 'utf8'), SESSION_OPTIONS);
    const made = await speak(engine, 'Thanks for calling. How can I help you today?');
    assert.ok(made > 0);

    rmSync(sessionOptionsPath);
    const stream = engine.synthesize({ text: 'A sentence the crash cuts short. And another one after it.', voice: NAMED_VOICES[0], speed: 1, wordTimings: false }, new AbortController().signal)[Symbol.asyncIterator]();
    await stream.next();
    assert.equal(engine.crashBusyWorker(), true);
    await assert.rejects(async () => {
      for (let r = await stream.next(); !r.done; r = await stream.next());
    });
    assert.ok(await eventually(() => engine.info().workers === 1, 20_000), 'a replacement worker is ready');
    assert.ok(existsSync(sessionOptionsPath), 'the replacement worker wrote the options file before loading');
    assert.equal(await speak(engine, 'Thanks for calling. How can I help you today?'), made);
  } finally {
    await engine.stop();
  }
});
