/**
 * @module test/sherpa-session-options
 * The onnxruntime session options every sherpa-onnx model loads with
 * (`engines/sherpa/session-options`): the file is written where the engine is
 * told, its provider string names it, and the model loads and speaks with it,
 * on the stand-in Piper model the test writes itself. (A worker writes the
 * file again before it loads; that a replaced worker does so is not tested
 * here: ending a busy sherpa-onnx worker ends the process.)
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SherpaEngine } from '../src/engines/sherpa/engine.js';
import { detectLayout, sherpaConfig } from '../src/engines/sherpa/layout.js';
import { ensureSessionOptions, providerWith, SESSION_OPTIONS } from '../src/engines/sherpa/session-options.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { createLogger } from '../src/log/logger.js';
import { removeRunDir, runDir, standInModel } from './helpers/sherpa-model.js';

after(() => removeRunDir());

/** The stand-in model on one worker, its options file at `sessionOptionsPath`. */
function engineWith(sessionOptionsPath: string, logger = createLogger('silent')): SherpaEngine {
  return new SherpaEngine({
    id: 'piper',
    model: standInModel(),
    numThreads: 1,
    workers: 1,
    queueLimit: 4,
    highWater: 4,
    voices: {},
    espeakDataDir: join(runDir(), 'espeak-ng-data'),
    sessionOptionsPath,
    logger,
  });
}

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

test('the engine writes the options where it is told and its model loads and speaks with them', { timeout: 60_000 }, async () => {
  const sessionOptionsPath = join(runDir(), 'engine-options', 'sherpa-onnx-session.conf');
  const engine = engineWith(sessionOptionsPath);
  await engine.start();
  try {
    assert.equal(readFileSync(sessionOptionsPath, 'utf8'), SESSION_OPTIONS);
    const first = await speak(engine, 'Thanks for calling. How can I help you today?');
    assert.ok(first > 0);
    // The same sentence again: the shape the memory pattern would have kept a block for.
    assert.equal(await speak(engine, 'Thanks for calling. How can I help you today?'), first);
  } finally {
    await engine.stop();
  }
});

test('an options file that cannot be written costs memory, not the start: the model loads without it and speaks', { timeout: 60_000 }, async () => {
  // A folder that cannot be made: its parent is a file.
  const blocker = join(runDir(), 'not-a-folder');
  writeFileSync(blocker, 'a file');
  const warnings: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void warnings.push(line) } as never);
  const engine = engineWith(join(blocker, 'sherpa-onnx-session.conf'), logger);
  await engine.start();
  try {
    assert.ok(await speak(engine, 'Thanks for calling.') > 0);
    assert.ok(warnings.some((line) => line.includes('cannot write the onnxruntime options file')), warnings.join('\n'));
  } finally {
    await engine.stop();
  }
});
