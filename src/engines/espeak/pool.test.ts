/**
 * @module engines/espeak/pool.test
 * The pool's failure behaviour: a crashed worker fails only its own job with
 * `engine_error` and is replaced; a full queue refuses with
 * `engine_unavailable`; a slow consumer pauses the worker instead of
 * buffering the whole clip; cancel frees the worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../errors/api-error.js';
import { createLogger } from '../../log/logger.js';
import { NAMED_VOICES } from '../../voices/builtin.js';
import { EspeakPool } from './pool.js';

const voice = NAMED_VOICES[0];
const LONG = 'This sentence is here to keep the engine busy for a while. '.repeat(60);

function pool(options: Partial<{ workers: number; queueLimit: number; highWater: number }> = {}) {
  return new EspeakPool({ id: 'espeak', workers: 1, queueLimit: 8, highWater: 8, logger: createLogger('silent'), ...options });
}

async function speak(engine: EspeakPool, text: string): Promise<number> {
  let samples = 0;
  for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) samples += chunk.samples.length;
  return samples;
}

test('a crashed worker fails its job with engine_error and is replaced', async () => {
  const engine = pool();
  await engine.start();
  try {
    const iterator = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, new AbortController().signal)[Symbol.asyncIterator]();
    await iterator.next();
    assert.equal(engine.crashBusyWorker(), true);
    await assert.rejects(async () => {
      for (let r = await iterator.next(); !r.done; r = await iterator.next());
    }, (err: unknown) => err instanceof ApiError && err.code === 'engine_error');
    for (let i = 0; i < 100 && !engine.isReady(); i++) await sleep(20);
    assert.equal(engine.isReady(), true, 'a replacement worker is ready');
    assert.ok((await speak(engine, 'Back again.')) > 5000);
  } finally {
    await engine.stop();
  }
});

test('a full queue refuses new work with engine_unavailable and Retry-After', async () => {
  const engine = pool({ queueLimit: 1 });
  await engine.start();
  try {
    const busy = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, new AbortController().signal)[Symbol.asyncIterator]();
    await busy.next(); // running on the only worker
    const queued = engine.synthesize({ text: 'Waiting.', voice, speed: 1, wordTimings: false }, new AbortController().signal);
    assert.throws(
      () => engine.synthesize({ text: 'Refused.', voice, speed: 1, wordTimings: false }, new AbortController().signal),
      (err: unknown) => err instanceof ApiError && err.code === 'engine_unavailable' && err.headers['retry-after'] === '1',
    );
    await busy.return?.(undefined);
    let samples = 0;
    for await (const chunk of queued) samples += chunk.samples.length;
    assert.ok(samples > 0, 'the queued job ran once the worker was free');
  } finally {
    await engine.stop();
  }
});

test('a slow consumer pauses the worker at the high-water mark', async () => {
  const engine = pool({ highWater: 4 });
  await engine.start();
  try {
    const iterator = engine.synthesize({ text: LONG, voice, speed: 1, wordTimings: false }, new AbortController().signal)[Symbol.asyncIterator]();
    await iterator.next();
    await sleep(400); // plenty of time to synthesize the whole text if nothing held it back
    const buffered = engine.info().bufferedChunks as number;
    assert.ok(buffered <= 5, `buffered ${buffered} chunks`);
    let chunks = 1;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) chunks++;
    assert.ok(chunks > 50, `${chunks} chunks in all: the text was long`);
  } finally {
    await engine.stop();
  }
});

test('cancelling frees the worker for the next job within a bounded time', async () => {
  const engine = pool({ highWater: 1000 });
  await engine.start();
  try {
    const controller = new AbortController();
    const iterator = engine.synthesize({ text: LONG.repeat(3), voice, speed: 1, wordTimings: false }, controller.signal)[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort(new Error('cancelled'));
    await assert.rejects(iterator.next(), /cancelled/);
    const started = performance.now();
    await speak(engine, 'Next.');
    assert.ok(performance.now() - started < 1000, `next job took ${performance.now() - started} ms`);
    assert.equal(engine.info().busy, 0);
  } finally {
    await engine.stop();
  }
});

test('the first chunk goes out alone, later ones are gathered; samples never reach -32768 and the Float32 form stays in [-1, 1]', async () => {
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
