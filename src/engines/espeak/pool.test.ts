/**
 * @module engines/espeak/pool.test
 * eSpeak on the worker pool: a slow consumer pauses the worker instead of
 * buffering the whole clip, the first chunk goes out alone, samples stay
 * within floatToInt16's range, and the engine reports its voices and pool
 * state. Cancellation, deadlines and crashes are in the engine contract
 * (`test/engines.contract.test.ts`) and the pool's own tests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../log/logger.js';
import { NAMED_VOICES } from '../../voices/builtin.js';
import { EspeakPool } from './pool.js';

const voice = NAMED_VOICES[0];
const LONG = 'This sentence is here to keep the engine busy for a while. '.repeat(60);

function pool(options: Partial<{ workers: number; queueLimit: number; highWater: number; splitFirstSentence: boolean; warmUpJobs: number }> = {}) {
  return new EspeakPool({ id: 'espeak', workers: 1, queueLimit: 8, highWater: 8, logger: createLogger('silent'), ...options });
}

test('a slow consumer pauses the worker at the high-water mark', { timeout: 30_000 }, async () => {
  const engine = pool({ highWater: 4 });
  await engine.start();
  try {
    const iterator = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, new AbortController().signal)[Symbol.asyncIterator]();
    await iterator.next();
    // The worker says when it waits for its consumer; while it waits it makes nothing.
    const deadline = performance.now() + 10_000;
    while (engine.info().paused !== 1) {
      if (performance.now() > deadline) assert.fail('the worker never paused for its consumer');
      await sleep(5);
    }
    const buffered = engine.info().bufferedChunks as number;
    assert.ok(buffered <= 5, `buffered ${buffered} chunks`);
    let chunks = 1;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) chunks++;
    assert.ok(chunks > 50, `${chunks} chunks in all: the text was long`);
  } finally {
    await engine.stop();
  }
});

test('the first chunk goes out alone, later ones are gathered; samples never reach -32768 and the Float32 form stays in [-1, 1]', { timeout: 30_000 }, async () => {
  const engine = pool({ highWater: 32 });
  await engine.start();
  try {
    const text = 'The quick brown fox jumps over the lazy dog. It was a sunny day.';
    const sizes: number[] = [];
    for await (const chunk of engine.synthesizeInt16({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
      sizes.push(chunk.samples.length);
      assert.equal(chunk.samples.indexOf(-32768), -1, 'never -32768, so the Float32 form maps back exactly');
    }
    assert.ok(sizes[0] <= 0.15 * engine.sampleRate, `first chunk ${sizes[0]} samples`);
    assert.ok(Math.max(...sizes) > 2 * sizes[0], `chunks ${sizes.join(',')}`);
    for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
      assert.ok(chunk.samples.every((s) => s >= -1 && s <= 1));
    }
  } finally {
    await engine.stop();
  }
});

test('after start it reports eSpeak\'s rate, its voices as built-ins, and the pool\'s state', { timeout: 20_000 }, async () => {
  const engine = pool();
  await engine.start();
  try {
    assert.equal(engine.sampleRate, 22050);
    const voices = engine.builtinVoices();
    assert.ok(voices.length > 50, `${voices.length} voices`);
    assert.ok(voices.some((v) => v.id === 'espeak-fr-fr' && v.profiles.espeak?.voice === 'fr-fr'));
    const info = engine.info();
    assert.equal(info.ready, true);
    assert.equal(info.workers, 1);
    assert.equal(info.busy, 0);
    assert.equal(info.queued, 0);
    assert.deepEqual(info.jobs, { submitted: 0, completed: 0, failed: 0, cancelled: 0, queueTimeouts: 0, jobTimeouts: 0, refused: 0 });
  } finally {
    await engine.stop();
  }
});

test("a long text holds a worker one sentence at a time: a second request's first audio comes before the long one ends", { timeout: 30_000 }, async () => {
  const engine = pool();
  await engine.start();
  try {
    const signal = new AbortController().signal;
    let longChunks = 0;
    let longDone = false;
    const long = (async () => {
      for await (const _ of engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, signal)) longChunks++;
      longDone = true;
    })();
    while (longChunks === 0) await new Promise((resolve) => setImmediate(resolve));
    const short = engine.synthesize({ text: 'Hello there.', voice, speed: 1, wordTimings: false }, signal)[Symbol.asyncIterator]();
    assert.equal((await short.next()).done, false);
    assert.equal(longDone, false, 'the short request spoke while the long one was still going');
    for (let r = await short.next(); !r.done; r = await short.next());
    await long;
  } finally {
    await engine.stop();
  }
});

test('word timings run on across sentences, each after the one before', { timeout: 30_000 }, async () => {
  const engine = pool();
  await engine.start();
  try {
    const words: { word: string; start: number; end: number }[] = [];
    let samples = 0;
    const text = 'First sentence here. Second one follows. And a third.';
    for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: true }, new AbortController().signal)) {
      samples += chunk.samples.length;
      words.push(...(chunk.words ?? []));
    }
    assert.deepEqual(words.map((w) => w.word), ['First', 'sentence', 'here', 'Second', 'one', 'follows', 'And', 'a', 'third']);
    for (let i = 1; i < words.length; i++) assert.ok(words[i].start >= words[i - 1].end - 1e-9, `${words[i].word} starts after ${words[i - 1].word} ends`);
    assert.ok(words[3].start > 0.5, `the second sentence's first word starts after the first sentence (${words[3].start} s)`);
    assert.ok(words.at(-1)!.end <= samples / engine.sampleRate + 1e-6);
  } finally {
    await engine.stop();
  }
});

test('while every worker is busy, a first sentence speaks its head on its own: same words, same timings order; unless configured not to', { timeout: 30_000 }, async () => {
  const text = 'Please hold while I transfer you to the next available agent.';
  const expected = ['Please', 'hold', 'while', 'I', 'transfer', 'you', 'to', 'the', 'next', 'available', 'agent'];
  const jobs = (engine: EspeakPool) => (engine.info().jobs as { submitted: number }).submitted;
  const speak = async (engine: EspeakPool) => {
    const words: { word: string; start: number; end: number }[] = [];
    for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: true }, new AbortController().signal)) words.push(...(chunk.words ?? []));
    return words;
  };
  /** Speaks `text` while the only worker is busy with a long text. */
  const speakWhileBusy = async (engine: EspeakPool) => {
    const busy = new AbortController();
    const long = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, busy.signal)[Symbol.asyncIterator]();
    await long.next();
    const words = speak(engine);
    busy.abort();
    await long.next().catch(() => undefined);
    return words;
  };
  const engine = pool();
  await engine.start();
  try {
    // A free worker: one job for the sentence.
    assert.deepEqual((await speak(engine)).map((w) => w.word), expected);
    assert.equal(jobs(engine), 1);
    assert.equal(engine.info().firstSentencesSplit, 0);

    // The only worker is busy: the head and the rest are two jobs.
    const split = await speakWhileBusy(engine);
    assert.equal(jobs(engine), 1 + 1 + 2, 'the long text, then the head and the rest');
    assert.equal(engine.info().firstSentencesSplit, 1);
    assert.deepEqual(split.map((w) => w.word), expected, 'no word gains the comma the head is spoken with');
    for (let i = 1; i < split.length; i++) assert.ok(split[i].start >= split[i - 1].end - 1e-9, `${split[i].word} starts after ${split[i - 1].word} ends`);
  } finally {
    await engine.stop();
  }

  const whole = pool({ splitFirstSentence: false });
  await whole.start();
  try {
    assert.deepEqual((await speakWhileBusy(whole)).map((w) => w.word), expected);
    assert.equal(jobs(whole), 2, 'the long text, then the sentence whole');
    assert.equal(whole.info().firstSentencesSplit, 0);
  } finally {
    await whole.stop();
  }
});

test('text that continues what its listener hears is spoken whole, after a new request that arrives while it waits', { timeout: 30_000 }, async () => {
  const engine = pool();
  await engine.start();
  try {
    const busy = new AbortController();
    const long = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, busy.signal)[Symbol.asyncIterator]();
    await long.next();
    const order: string[] = [];
    const run = async (name: string, text: string, playback?: { startedAt: number; seconds: number }) => {
      for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false, ...(playback ? { playback } : {}) }, new AbortController().signal)) {
        if (chunk.samples.length > 0 && !order.includes(name)) order.push(name);
      }
    };
    // Its listener has been sent 5 s of audio just now: it is not due for seconds.
    const continuing = run('continuing', 'Please hold while I transfer you to the next available agent.', { startedAt: performance.now(), seconds: 5 });
    const fresh = run('new request', 'Good morning.');
    busy.abort();
    await long.next().catch(() => undefined);
    await Promise.all([continuing, fresh]);
    assert.deepEqual(order, ['new request', 'continuing']);
    assert.equal((engine.info().jobs as { submitted: number }).submitted, 3, 'the long text, the continuing sentence whole, the new request');
    assert.equal(engine.info().firstSentencesSplit, 0);
  } finally {
    await engine.stop();
  }
});

test('warm before ready: start() resolves, and the engine says ready, only after every worker has spoken its warm-up jobs', { timeout: 60_000 }, async () => {
  const engine = pool({ workers: 2, warmUpJobs: 3 });
  let started = false;
  const starting = engine.start().then(() => (started = true));
  try {
    // Not ready while the warm-up runs, though the workers are up and speaking.
    const deadline = performance.now() + 30_000;
    while ((engine.info().jobs as { submitted: number }).submitted === 0) {
      if (performance.now() > deadline) assert.fail('no warm-up job was ever submitted');
      // Yield to the event loop (the pool's messages), no timed wait: the deadline bounds the poll.
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(engine.isReady(), false, 'ready before the warm-up was done');
    await starting;
    assert.ok(started);
    assert.equal(engine.isReady(), true);
    const jobs = engine.info().jobs as { completed: number; failed: number };
    assert.ok(jobs.completed >= 6, `${jobs.completed} warm-up jobs completed, 3 per worker asked`);
    assert.equal(jobs.failed, 0, 'every warm-up job is one the engine can speak, through each output stage');
  } finally {
    await starting.catch(() => undefined);
    await engine.stop();
  }
});
