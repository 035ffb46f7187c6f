/**
 * @module test/helpers/engine-contract
 * The contract every engine passes, whatever it runs on: chunks of finite
 * Float32 audio at its native rate, speech for text, word timings that line
 * up with the words, cancellation by signal or by breaking the loop, and the
 * input hazards (NUL bytes, markup, very long words, foreign scripts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Engine, EngineChunk } from '../../src/engines/engine.js';
import { NAMED_VOICES } from '../../src/voices/builtin.js';
import type { Voice } from '../../src/voices/voice.js';

export interface ContractOptions {
  /** Whether the engine reads text (tone engines only count characters). */
  speaksText: boolean;
  /** Whether the engine reports word timings; engines that cannot must report none. */
  wordTimings: boolean;
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

function level(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(samples.length, 1));
}

export function engineContract(name: string, create: () => Engine, options: ContractOptions): void {
  describe(`engine contract: ${name}`, () => {
    let engine: Engine;
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

    test('yields several chunks of finite audio at speech level', async () => {
      const { chunks, samples, seconds } = await collect(engine, 'The quick brown fox jumps over the lazy dog. It was a sunny day.');
      assert.ok(chunks.length > 1, `${chunks.length} chunks`);
      assert.ok(seconds > 1.5 && seconds < 15, `${seconds} s`);
      assert.ok(samples.every((s) => Number.isFinite(s) && s >= -1 && s <= 1));
      assert.ok(level(samples) > 0.02);
    });

    test('longer text gives longer audio; speed shortens it', async () => {
      const short = await collect(engine, 'Hello there.');
      const long = await collect(engine, 'Hello there. How are you doing today, my friend?');
      assert.ok(long.seconds > short.seconds * 1.5);
      const fast = await collect(engine, 'Hello there. How are you doing today, my friend?', { speed: 1.5 });
      assert.ok(fast.seconds < long.seconds * 0.85, `${fast.seconds} vs ${long.seconds}`);
    });

    test(options.wordTimings ? 'word timings name the words in order, within the audio' : 'reports no word timings it cannot know', async () => {
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

    test('an aborted signal stops the synthesis and the engine serves the next request', async () => {
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

    test('breaking out of the loop cancels the work', async () => {
      const long = 'Another long paragraph that keeps on going. '.repeat(40);
      for await (const _ of engine.synthesize({ text: long, voice, speed: 1, wordTimings: false }, new AbortController().signal)) break;
      const started = performance.now();
      await collect(engine, 'Next one.');
      assert.ok(performance.now() - started < 2000);
    });

    test('NUL and control characters neither cut the text short nor fail', async () => {
      const clean = await collect(engine, 'Hello world and more words after it.');
      const dirty = await collect(engine, 'Hello\u0000 world\u0007 and more words after it.');
      assert.ok(dirty.seconds > clean.seconds * 0.8, `${dirty.seconds} vs ${clean.seconds}`);
    });

    test('markup characters are read literally, never interpreted', async () => {
      const plain = await collect(engine, 'Wait here.');
      const markup = await collect(engine, 'Wait <break time="5s"/> here.');
      // An interpreted break would add five seconds of silence.
      assert.ok(markup.seconds < plain.seconds + 4, `${markup.seconds} vs ${plain.seconds}`);
      if (options.speaksText) assert.ok(markup.seconds > plain.seconds, 'the tag is spoken');
      const entity = await collect(engine, 'Fish &amp; chips < 5 & > 2');
      assert.ok(entity.seconds > 0.5);
    });

    test('a very long word and foreign scripts produce bounded audio without error', async () => {
      const word = await collect(engine, 'x'.repeat(1500));
      assert.ok(word.seconds > 0 && word.seconds < 600);
      const foreign = await collect(engine, '你好，世界。Привет мир. مرحبا');
      assert.ok(foreign.samples.every((s) => Number.isFinite(s)));
      const emoji = await collect(engine, '😀🎉');
      assert.ok(emoji.samples.every((s) => Number.isFinite(s)));
    });

    test('runs requests concurrently without mixing them up', async () => {
      const texts = ['One.', 'Two two two two.', 'Three three three three three three three three.'];
      const results = await Promise.all(texts.map((t) => collect(engine, t)));
      assert.ok(results[0].seconds < results[1].seconds && results[1].seconds < results[2].seconds);
    });
  });
}
