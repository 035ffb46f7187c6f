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
import type { EngineInput } from '../src/engines/engine.js';
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

test('a first sentence goes as a head and the rest: at clause punctuation always, between words only while every worker is busy', { timeout: 60_000 }, async () => {
  const engine = sherpa(1);
  await engine.start();
  try {
    const voice = NAMED_VOICES[0];
    const submitted = () => (engine.info().jobs as { submitted: number }).submitted;
    const split = () => engine.info().firstSentencesSplit as number;
    const speak = async (text: string, extra: Partial<EngineInput> = {}, firstChunk?: () => void) => {
      let samples = 0;
      for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false, ...extra }, new AbortController().signal)) {
        if (samples === 0 && chunk.samples.length > 0) firstChunk?.();
        samples += chunk.samples.length;
      }
      return samples;
    };
    const comma = 'Thanks for calling, your order has shipped today.';
    const noComma = 'Please hold while I transfer you to the next available agent.';

    let jobs = submitted();
    assert.ok((await speak(comma)) > 0);
    assert.deepEqual([submitted() - jobs, split()], [2, 1], 'cut at the comma with the worker idle');
    jobs = submitted();
    await speak(noComma);
    assert.deepEqual([submitted() - jobs, split()], [1, 1], 'no cut between words with the worker idle');
    jobs = submitted();
    await speak(comma, { playback: { startedAt: performance.now(), seconds: 1 } });
    await speak(comma, { background: true });
    assert.deepEqual([submitted() - jobs, split()], [2, 1], 'text continuing what is heard, and background work, are not cut');

    // The one worker busy with a long answer: the new request's first sentence is cut after four words.
    let started!: () => void;
    const first = new Promise<void>((resolve) => (started = resolve));
    const answer = speak('The first sentence of a long answer is here. The second one follows it. The third one comes after that.', {}, started);
    await first;
    await Promise.all([answer, speak(noComma)]);
    assert.equal(split(), 2, 'cut between words while the worker was busy');

    const whole = sherpa(1, { splitFirstSentence: false });
    await whole.start();
    try {
      for await (const _ of whole.synthesize({ text: comma, voice, speed: 1, wordTimings: false }, new AbortController().signal));
      assert.deepEqual([(whole.info().jobs as { submitted: number }).submitted, whole.info().firstSentencesSplit], [1, 0], 'splitFirstSentence: false keeps it whole');
    } finally {
      await whole.stop();
    }
  } finally {
    await engine.stop();
  }
});
