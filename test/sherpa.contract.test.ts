/**
 * @module test/sherpa.contract
 * The shared engine contract and the worker contract against the sherpa-onnx
 * engine, on a stand-in Piper model the test writes itself
 * (`helpers/sherpa-model.ts`): real loading, phonemizing, sentence callbacks
 * and cancellation, with a tone per phoneme instead of a voice.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { SherpaEngine } from '../src/engines/sherpa/engine.js';
import { createLogger } from '../src/log/logger.js';
import { engineContract, workerContract } from './helpers/engine-contract.js';
import { removeRunDir, runDir, standInModel } from './helpers/sherpa-model.js';
import { join } from 'node:path';

const model = standInModel();
const sherpa = (workers: number, limits = {}) =>
  new SherpaEngine({
    id: 'piper',
    model,
    numThreads: 1,
    workers,
    queueLimit: 16,
    highWater: 4,
    voices: {},
    espeakDataDir: join(runDir(), 'espeak-ng-data'),
    logger: createLogger('silent'),
    ...limits,
  });

after(() => removeRunDir());

engineContract('sherpa-onnx', () => sherpa(2), { speaksText: true, wordTimings: false, deterministic: true, staged: true });
workerContract('sherpa-onnx', (limits) => sherpa(1, limits));

test('one job per sentence: a new request is spoken before the later sentences of one already speaking', { timeout: 60_000 }, async () => {
  const engine = sherpa(1);
  await engine.start();
  try {
    const voice = NAMED_VOICES[0];
    const order: string[] = [];
    const long = 'The first sentence of a long answer is here. The second one follows it. The third one comes after that. And the fourth one ends it.';
    const speak = async (name: string, text: string, firstChunk?: () => void) => {
      let chunks = 0;
      for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
        if (chunk.samples.length === 0) continue;
        if (chunks++ === 0) firstChunk?.();
        order.push(name);
      }
    };
    let started!: () => void;
    const first = new Promise<void>((resolve) => (started = resolve));
    const answer = speak('long', long, started);
    await first;
    await Promise.all([answer, speak('new', 'Hello there.')]);
    const jobs = (engine.info().jobs as { submitted: number }).submitted;
    assert.equal(jobs, 5, "one job per sentence: the answer's four, then the new request's one");
    assert.ok(order.indexOf('new') < order.lastIndexOf('long'), `the new request waited for the whole answer: ${order.join(' ')}`);
  } finally {
    await engine.stop();
  }
});
