/**
 * @module test/helpers/engine-contract
 * The contract every engine passes, whatever it runs on: chunks of finite
 * Float32 audio at its native rate, speech for text, word timings that line
 * up with the words, cancellation by signal or by breaking the loop, the
 * input hazards (NUL bytes, markup, very long words, foreign scripts), and
 * the Int16 path and the staged path (engines/staged) where an engine offers
 * them. Engines that run jobs on a
 * fixed set of workers also pass `workerContract` on a single worker, where a
 * cancel that does nothing, a missed deadline or a lost worker would show.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeMulaw } from '../../src/audio/g711.js';
import { OutputStage, type StageSpec } from '../../src/audio/output-stage.js';
import { floatToInt16 } from '../../src/audio/pcm.js';
import type { Engine, EngineChunk, WordTiming } from '../../src/engines/engine.js';
import { offersInt16, type Int16Chunk } from '../../src/engines/pcm16.js';
import { offersStaging, type StageCursor, type StagedChunk } from '../../src/engines/staged.js';
import { ApiError } from '../../src/errors/api-error.js';
import { NAMED_VOICES } from '../../src/voices/builtin.js';
import type { Voice } from '../../src/voices/voice.js';
import { until } from './poll.js';

export interface ContractOptions {
  /** Whether the engine reads text (tone engines only count characters). */
  speaksText: boolean;
  /** Whether the engine reports word timings; engines that cannot must report none. */
  wordTimings: boolean;
  /**
   * Whether the same input gives the same samples every time. Then the Int16 path must equal the
   * Float32 path sample for sample; otherwise (eSpeak varies by a few samples between runs) in
   * shape, length and level.
   */
  deterministic?: boolean;
  /** Whether the engine offers `synthesizeInt16`; the contract checks the engine says the same. */
  int16?: boolean;
  /** Whether the engine offers `synthesizeStaged`; the contract checks the engine says the same. */
  staged?: boolean;
}

/** An engine whose jobs run on a fixed set of workers (`info()` reports `busy` and `queued`). */
export interface WorkerEngine extends Engine {
  /** Ends a busy worker the way a crash would. */
  crashBusyWorker(): boolean;
}

export interface WorkerLimits {
  queueTimeoutMs?: number;
  jobTimeoutMs?: number;
}

const voice: Voice = NAMED_VOICES[0];

async function collect(engine: Engine, text: string, options: { wordTimings?: boolean; signal?: AbortSignal; speed?: number } = {}) {
  const chunks: EngineChunk[] = [];
  for await (const chunk of engine.synthesize(
    { text, voice, speed: options.speed ?? 1, wordTimings: options.wordTimings ?? false },
    options.signal ?? new AbortController().signal,
  )) {
    chunks.push(chunk);
  }
  const samples = new Float32Array(chunks.reduce((n, c) => n + c.samples.length, 0));
  let offset = 0;
  for (const c of chunks) {
    samples.set(c.samples, offset);
    offset += c.samples.length;
  }
  return { chunks, samples, seconds: samples.length / engine.sampleRate, words: chunks.flatMap((c) => c.words ?? []) };
}

async function collectInt16(engine: Engine, text: string, wordTimings = false) {
  assert.ok(offersInt16(engine));
  const chunks: Int16Chunk[] = [];
  for await (const chunk of engine.synthesizeInt16({ text, voice, speed: 1, wordTimings }, new AbortController().signal)) chunks.push(chunk);
  return chunks;
}

const wordsOf = (chunks: { words?: WordTiming[] }[]) => chunks.flatMap((c) => c.words ?? []);

async function collectStaged(engine: Engine, text: string, stage: StageCursor) {
  assert.ok(offersStaging(engine));
  const chunks: StagedChunk[] = [];
  for await (const chunk of engine.synthesizeStaged({ text, voice, speed: 1, wordTimings: true }, stage, new AbortController().signal)) chunks.push(chunk);
  return chunks;
}

/** A few hundred samples of a tone, so a stage's state is not where a stream starts. */
function lead(rate: number): Float32Array {
  return Float32Array.from({ length: Math.round(rate * 0.013) }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 300 * i) / rate));
}

function level(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(samples.length, 1));
}

export function engineContract(name: string, create: () => Engine, options: ContractOptions): void {
  describe(`engine contract: ${name}`, () => {
    let engine: Engine;
    // Every test is bounded, so an engine that loses a job fails instead of hanging.
    before(async () => {
      engine = create();
      await engine.start();
    });
    after(() => engine.stop());

    test('is ready after start and describes itself', () => {
      assert.equal(engine.isReady(), true);
      const info = engine.info();
      assert.equal(info.id, engine.id);
      assert.equal(info.sampleRate, engine.sampleRate);
      assert.ok(engine.sampleRate >= 8000 && engine.sampleRate <= 48000);
      assert.equal(engine.supportsVoice(voice), true);
    });

    test('yields several chunks of finite audio at speech level', { timeout: 30_000 }, async () => {
      const { chunks, samples, seconds } = await collect(engine, 'The quick brown fox jumps over the lazy dog. It was a sunny day.');
      assert.ok(chunks.length > 1, `${chunks.length} chunks`);
      assert.ok(seconds > 1.5 && seconds < 15, `${seconds} s`);
      assert.ok(samples.every((s) => Number.isFinite(s) && s >= -1 && s <= 1));
      assert.ok(level(samples) > 0.02);
    });

    test('longer text gives longer audio; speed shortens it', { timeout: 30_000 }, async () => {
      const short = await collect(engine, 'Hello there.');
      const long = await collect(engine, 'Hello there. How are you doing today, my friend?');
      assert.ok(long.seconds > short.seconds * 1.5);
      const fast = await collect(engine, 'Hello there. How are you doing today, my friend?', { speed: 1.5 });
      assert.ok(fast.seconds < long.seconds * 0.85, `${fast.seconds} vs ${long.seconds}`);
    });

    test(options.wordTimings ? 'word timings name the words in order, within the audio' : 'reports no word timings it cannot know', { timeout: 30_000 }, async () => {
      const text = 'Alpha bravo <charlie> & delta.';
      const { words, seconds } = await collect(engine, text, { wordTimings: true });
      if (!options.wordTimings) {
        assert.deepEqual(words, []);
        assert.ok(seconds > 0);
        return;
      }
      assert.ok(words.length >= 4, JSON.stringify(words));
      let last = -1;
      for (const w of words) {
        assert.ok(w.start >= last - 1e-9 && w.end >= w.start && w.end <= seconds + 0.05, JSON.stringify(w));
        assert.ok(text.includes(w.word), `${w.word} is from the text`);
        last = w.start;
      }
      assert.ok(words.some((w) => w.word.includes('Alpha')));
      assert.ok(words.some((w) => w.word.includes('delta')));
    });

    test('an aborted signal stops the synthesis and the engine serves the next request', { timeout: 30_000 }, async () => {
      const controller = new AbortController();
      const long = 'This is a long paragraph that keeps going. '.repeat(40);
      let received = 0;
      await assert.rejects(async () => {
        for await (const chunk of engine.synthesize({ text: long, voice, speed: 1, wordTimings: false }, controller.signal)) {
          received += chunk.samples.length;
          controller.abort(new Error('stop'));
        }
      }, /stop/);
      assert.ok(received > 0);
      const next = await collect(engine, 'Still here.');
      assert.ok(next.seconds > 0.3);
    });

    test('breaking out of the loop cancels the work', { timeout: 30_000 }, async () => {
      const long = 'Another long paragraph that keeps on going. '.repeat(40);
      for await (const _ of engine.synthesize({ text: long, voice, speed: 1, wordTimings: false }, new AbortController().signal)) break;
      const started = performance.now();
      await collect(engine, 'Next one.');
      assert.ok(performance.now() - started < 2000);
    });

    test('NUL and control characters neither cut the text short nor fail', { timeout: 30_000 }, async () => {
      const clean = await collect(engine, 'Hello world and more words after it.');
      const dirty = await collect(engine, 'Hello\u0000 world\u0007 and more words after it.');
      assert.ok(dirty.seconds > clean.seconds * 0.8, `${dirty.seconds} vs ${clean.seconds}`);
    });

    test('markup characters are read literally, never interpreted', { timeout: 30_000 }, async () => {
      const plain = await collect(engine, 'Wait here.');
      const markup = await collect(engine, 'Wait <break time="5s"/> here.');
      // An interpreted break would add five seconds of silence.
      assert.ok(markup.seconds < plain.seconds + 4, `${markup.seconds} vs ${plain.seconds}`);
      if (options.speaksText) assert.ok(markup.seconds > plain.seconds, 'the tag is spoken');
      const entity = await collect(engine, 'Fish &amp; chips < 5 & > 2');
      assert.ok(entity.seconds > 0.5);
    });

    test('a very long word and foreign scripts produce bounded audio without error', { timeout: 30_000 }, async () => {
      const word = await collect(engine, 'x'.repeat(1500));
      assert.ok(word.seconds > 0 && word.seconds < 600);
      const foreign = await collect(engine, '你好，世界。Привет мир. مرحبا');
      assert.ok(foreign.samples.every((s) => Number.isFinite(s)));
      const emoji = await collect(engine, '😀🎉');
      assert.ok(emoji.samples.every((s) => Number.isFinite(s)));
    });

    test('runs requests concurrently without mixing them up', { timeout: 30_000 }, async () => {
      const texts = ['One.', 'Two two two two.', 'Three three three three three three three three.'];
      const results = await Promise.all(texts.map((t) => collect(engine, t)));
      assert.ok(results[0].seconds < results[1].seconds && results[1].seconds < results[2].seconds);
    });

    test('synthesizeInt16, where offered, is the Float32 synthesis as 16-bit samples', { timeout: 30_000 }, async () => {
      assert.equal(offersInt16(engine), options.int16 === true, 'the engine offers an Int16 path exactly when declared');
      if (!offersInt16(engine)) return;
      for (const text of ['The quick brown fox jumps over the lazy dog. It was a sunny day.', 'Alpha bravo <charlie> & delta.']) {
        const floats: EngineChunk[] = (await collect(engine, text, { wordTimings: true })).chunks;
        const ints = await collectInt16(engine, text, true);
        for (const chunk of ints) {
          assert.ok(chunk.samples instanceof Int16Array);
          assert.equal(chunk.samples.indexOf(-32768), -1, 'never -32768: floatToInt16 cannot make it');
        }
        assert.deepEqual(wordsOf(ints).map((w) => w.word), wordsOf(floats).map((w) => w.word));
        if (options.deterministic) {
          assert.equal(ints.length, floats.length);
          ints.forEach((chunk, i) => assert.deepEqual(chunk.samples, floatToInt16(floats[i].samples), `chunk ${i}`));
          assert.deepEqual(wordsOf(ints), wordsOf(floats));
          continue;
        }
        const intSamples = Float32Array.from(ints.flatMap((c) => [...c.samples]), (s) => s / 32767);
        const floatSamples = Float32Array.from(floats.flatMap((c) => [...c.samples]));
        assert.ok(Math.abs(ints.length - floats.length) <= 1, `${ints.length} vs ${floats.length} chunks`);
        assert.ok(Math.abs(intSamples.length - floatSamples.length) <= 0.01 * floatSamples.length, `${intSamples.length} vs ${floatSamples.length} samples`);
        assert.ok(Math.abs(level(intSamples) - level(floatSamples)) <= 0.05 * level(floatSamples), `level ${level(intSamples)} vs ${level(floatSamples)}`);
        assert.ok(Math.abs(ints[0].samples.length - floats[0].samples.length) <= 0.01 * engine.sampleRate, 'first chunks alike');
      }
    });

    test('synthesizeStaged, where offered, is the output stage run over the synthesis, continued across sentences', { timeout: 30_000 }, async () => {
      assert.equal(offersStaging(engine), options.staged === true, 'the engine offers a staged path exactly when declared');
      if (!offersStaging(engine)) return;
      const text = 'The quick brown fox jumps over the lazy dog. It was a sunny day. Then it rained.';
      const specs: StageSpec[] = [
        { inputRate: engine.sampleRate, outputRate: 8000, encoding: 'pcm_mulaw' },
        { inputRate: engine.sampleRate, outputRate: 2 * engine.sampleRate, encoding: 'pcm_s16le' },
      ];
      for (const spec of specs) {
        const gain = 0.7;
        // The stage starts from a state with audio already through it, as a request's later segment would.
        const before = new OutputStage(spec);
        const head = before.encode(lead(spec.inputRate), 1);
        const cursor: StageCursor = { spec, gain, state: before.state() };
        const staged = await collectStaged(engine, text, cursor);
        const bytes = Buffer.concat([head, ...staged.map((c) => c.audio), new OutputStage(spec, cursor.state).flush()]);
        const made = staged.reduce((n, c) => n + c.made, 0);
        const width = spec.encoding === 'pcm_mulaw' ? 1 : 2;
        // Exactly the output rate's length over the whole stream: a state lost between sentences loses the filter's held samples.
        const total = lead(spec.inputRate).length + made;
        assert.equal(bytes.length / width, Math.round((total * spec.outputRate) / spec.inputRate), `${spec.outputRate} Hz: the stream's exact length`);
        assert.ok(staged.every((c) => c.audio instanceof Uint8Array));
        // The same words, at the same times, as the plain synthesis.
        const plain = await collect(engine, text, { wordTimings: true });
        assert.deepEqual(wordsOf(staged).map((w) => w.word), plain.words.map((w) => w.word));
        // What this thread's stage makes of the plain synthesis, from the same state.
        const here = new OutputStage(spec);
        const expected = Buffer.concat([here.encode(lead(spec.inputRate), 1), ...plain.chunks.map((c) => here.encode(c.samples, gain)), here.flush()]);
        if (options.deterministic) {
          assert.deepEqual(bytes, expected, `${spec.outputRate} Hz: the same bytes as the stage run here`);
          assert.deepEqual(wordsOf(staged), plain.words);
          continue;
        }
        assert.ok(Math.abs(made - plain.samples.length) <= 0.01 * plain.samples.length, `${made} vs ${plain.samples.length} samples made`);
        const asLevel = (b: Buffer) => (width === 1 ? Float32Array.from(decodeMulaw(b), (x) => x / 32768) : Float32Array.from(new Int16Array(b.buffer, b.byteOffset, b.length / 2), (x) => x / 32768));
        const got = level(asLevel(bytes));
        const want = level(asLevel(expected));
        assert.ok(Math.abs(got - want) <= 0.05 * want, `${spec.outputRate} Hz: level ${got} vs ${want}`);
      }
    });
  });
}

const LONG = 'This paragraph keeps the only worker busy for a good while, unless it is cancelled. '.repeat(110);

/** Resolves with `work`'s result, or fails when it takes longer than `ms` (aborting the signal it was given). */
async function within<T>(ms: number, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`${what} took longer than ${ms} ms`);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

const busy = (engine: Engine) => engine.info().busy as number;
const isCode = (code: string) => (err: unknown) => err instanceof ApiError && err.code === code;

/**
 * The contract of an engine with a fixed set of workers, shown on one worker (a second would hide a
 * worker that was never freed): every way of leaving a job frees the worker for the next request at
 * once, the queue and job deadlines hold, and a crashed worker fails only its job.
 */
export function workerContract(name: string, create: (limits: WorkerLimits) => WorkerEngine): void {
  describe(`engine contract: ${name} on one worker`, () => {
    let engine: WorkerEngine;
    before(async () => {
      engine = create({});
      await engine.start();
    });
    after(() => engine.stop());

    const start = (target: Engine, signal = new AbortController().signal, text = LONG) =>
      target.synthesize({ text, voice, speed: 1, wordTimings: false }, signal)[Symbol.asyncIterator]();

    /** The next request is served promptly and nothing is left running. */
    async function workerIsFree(target: Engine = engine): Promise<void> {
      const next = await within(3000, 'the next request', (signal) => collect(target, 'Next one, please.', { signal }));
      assert.ok(next.seconds > 0.3);
      await until(() => busy(target) === 0, { timeoutMs: 3000, intervalMs: 5, what: 'busy returning to 0' });
    }

    test('aborting after the first chunk frees the worker', { timeout: 20_000 }, async () => {
      const controller = new AbortController();
      const stream = start(engine, controller.signal);
      assert.equal((await stream.next()).done, false);
      controller.abort(new Error('client left'));
      await assert.rejects(stream.next(), /client left/);
      await workerIsFree();
    });

    test('an abort frees the worker at once, even while nobody pulls', { timeout: 20_000 }, async () => {
      const controller = new AbortController();
      const stream = start(engine, controller.signal);
      await stream.next();
      controller.abort(new Error('client left'));
      await until(() => busy(engine) === 0, { timeoutMs: 3000, intervalMs: 5, what: 'busy returning to 0 without another read' });
      await assert.rejects(stream.next(), /client left/);
      await workerIsFree();
    });

    test('leaving the iterator without an abort frees the worker', { timeout: 20_000 }, async () => {
      const stream = start(engine);
      await stream.next();
      await stream.return?.();
      await workerIsFree();
    });

    test('an iterator returned before its first read never holds the worker', { timeout: 20_000 }, async () => {
      const stream = start(engine);
      await stream.return?.();
      await workerIsFree();
    });

    test('a job that waits longer than queueTimeoutMs fails with engine_unavailable and Retry-After', { timeout: 20_000 }, async () => {
      const own = create({ queueTimeoutMs: 300 });
      await own.start();
      try {
        const holder = start(own);
        await holder.next();
        const waiting = start(own, undefined, 'Waiting in line.');
        await within(3000, 'the queue deadline', () =>
          assert.rejects(waiting.next(), (err: unknown) => isCode('engine_unavailable')(err) && (err as ApiError).headers['retry-after'] === '1'),
        );
        assert.equal(own.info().queued, 0);
        await holder.return?.();
        await workerIsFree(own);
      } finally {
        await own.stop();
      }
    });

    test('a job that runs longer than jobTimeoutMs fails with engine_timeout and frees the worker', { timeout: 20_000 }, async () => {
      // A deadline far shorter than the work, however fast the engine (stand-in models are very fast).
      const own = create({ jobTimeoutMs: 500 });
      await own.start();
      try {
        // Read as fast as it comes: the engine itself is too slow for this deadline.
        await within(8000, 'the job deadline', async (signal) => {
          await assert.rejects(collect(own, LONG.repeat(6), { signal }), isCode('engine_timeout'));
        });
        await workerIsFree(own);
        // Stop reading: a reader that leaves its audio unread past the deadline loses the job too.
        const stalled = start(own);
        await stalled.next();
        await until(() => busy(own) === 0, { timeoutMs: 5000, intervalMs: 5, what: 'the stalled job being cancelled' });
        await assert.rejects(
          (async () => {
            for (let r = await stalled.next(); !r.done; r = await stalled.next());
          })(),
          isCode('engine_timeout'),
        );
      } finally {
        await own.stop();
      }
    });

    test('a slow but steady reader is not cut off by jobTimeoutMs', { timeout: 20_000 }, async () => {
      const own = create({ jobTimeoutMs: 3000 });
      await own.start();
      try {
        await collect(own, 'Warming up.');
        const started = performance.now();
        let seconds = 0;
        for await (const chunk of own.synthesize({ text: LONG.slice(0, 200), voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
          seconds += chunk.samples.length / own.sampleRate;
          await sleep(200);
        }
        assert.ok(performance.now() - started > 3000, 'the reading outlasted the deadline');
        assert.ok(seconds > 8, `${seconds} s of audio all arrived`);
      } finally {
        await own.stop();
      }
    });

    test('a crashed worker fails only its job with engine_error and is replaced', { timeout: 20_000 }, async () => {
      const stream = start(engine);
      await stream.next();
      assert.equal(engine.crashBusyWorker(), true);
      await assert.rejects(
        (async () => {
          for (let r = await stream.next(); !r.done; r = await stream.next());
        })(),
        isCode('engine_error'),
      );
      await until(() => engine.isReady(), { timeoutMs: 10_000, intervalMs: 5, what: 'a replacement worker' });
      await workerIsFree();
    });
  });
}
