/**
 * @module test/sherpa-cloning
 * Cloning with the sherpa-onnx engine, at two levels.
 *
 * At the worker boundary: the engine's real model worker runs with a
 * recording binding in place of sherpa-onnx, and a cloning model's
 * `generate` call is seen to get `referenceAudio` (the job's samples, in
 * shared memory, not copied), `referenceSampleRate`, `referenceText` and
 * `numSteps` in its `generationConfig`; the other families get speaker and
 * speed there and no reference.
 *
 * Served: a stand-in ZipVoice model the test writes (`zipvoiceStandIn`, whose
 * audio grows with the reference clip and its transcript) is detected,
 * probed and loaded by real sherpa-onnx; a voice cloned over the API speaks
 * through it, and a longer clip or transcript makes the audio longer by what
 * the model was given. Built-in voices and voices without a transcript are
 * refused with 409s, and eSpeak NG still refuses the cloned voice.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { floatToInt16, int16ToBytes } from '../src/audio/pcm.js';
import { wavHeader } from '../src/audio/wav.js';
import type { SherpaJob, SherpaReady } from '../src/engines/sherpa/protocol.js';
import { WorkerPool } from '../src/engines/worker-pool/pool.js';
import { createLogger } from '../src/log/logger.js';
import type { RecordedCall } from './helpers/recording-sherpa-worker.js';
import { removeRunDir, ZIPVOICE_HOP, ZIPVOICE_STAND_IN_RATE, zipvoiceStandIn } from './helpers/sherpa-model.js';
import { startServer, type TestServer } from './helpers/server.js';
import { gainOf } from '../src/synthesis/voice-gain.js';

const logger = createLogger('silent');

/** Gathers what a recording worker reports; `until` wakes on each report, failing after a bound. */
class Recorder {
  readonly name = `sherpa-calls-${randomUUID()}`;
  readonly calls: RecordedCall[] = [];
  private readonly channel = new BroadcastChannel(this.name);
  private arrived: (() => void) | null = null;

  constructor() {
    this.channel.onmessage = (event) => {
      this.calls.push((event as { data: RecordedCall }).data);
      this.arrived?.();
    };
  }

  async until(count: number, timeoutMs = 5000): Promise<RecordedCall[]> {
    if (this.calls.length >= count) return this.calls;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.arrived = null;
        reject(new Error(`${this.calls.length} of ${count} calls arrived within ${timeoutMs} ms`));
      }, timeoutMs);
      this.arrived = () => {
        if (this.calls.length < count) return;
        clearTimeout(timer);
        this.arrived = null;
        resolve();
      };
    });
    return this.calls;
  }

  close(): void {
    this.channel.close();
  }
}

function recordingPool(config: unknown, recorder: Recorder, numSteps?: number, extra: Record<string, unknown> = {}) {
  return new WorkerPool<SherpaJob, Float32Array, never, SherpaReady>({
    name: 'recording-sherpa',
    workerUrl: new URL('./helpers/recording-sherpa-worker.js', import.meta.url),
    workerData: { config, channel: recorder.name, ...(numSteps !== undefined ? { numSteps } : {}), ...extra },
    workers: 1,
    queueLimit: 4,
    highWater: 8,
    logger,
  });
}

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let chunks = 0;
  for await (const _ of stream) chunks++;
  return chunks;
}

const ZIPVOICE_CONFIG = { model: { zipvoice: { tokens: 't', encoder: 'e', decoder: 'd', vocoder: 'v', dataDir: 'x', lexicon: 'l' } }, maxNumSentences: 1 };
const VITS_CONFIG = { model: { vits: { model: 'm', tokens: 't', dataDir: 'x' } }, maxNumSentences: 1 };

describe('at the worker boundary', () => {
  test('a cloning model gets the reference clip, its rate and transcript, and numSteps with every sentence', { timeout: 20_000 }, async () => {
    const recorder = new Recorder();
    const pool = recordingPool(ZIPVOICE_CONFIG, recorder, 3);
    try {
      await pool.start();
      // The warm-up speaks before any voice exists, in the voice of a stand-in reference: without one the call would end the process.
      const [warmUp] = await recorder.until(1);
      assert.ok(warmUp.referenceAudio && warmUp.referenceAudio.length > 0);
      assert.equal(warmUp.generationConfig?.referenceText, 'Ready.');

      const audio = new Float32Array(new SharedArrayBuffer(36_000 * 4));
      for (let n = 0; n < audio.length; n++) audio[n] = Math.sin(n / 7) * 0.25;
      const job: SherpaJob = { text: 'First sentence here. And a second one.', sid: 0, speed: 1.25, reference: { audio, sampleRate: 24000, text: 'What the clip says.' } };
      assert.ok((await drain(pool.submit(job, new AbortController().signal, { chunk: (samples) => samples }))) >= 2);
      const calls = (await recorder.until(3)).slice(1);
      assert.deepEqual(calls.map((c) => c.text), ['First sentence here.', 'And a second one.']);
      for (const call of calls) {
        assert.deepEqual(call.generationConfig, { sid: 0, speed: 1.25, referenceSampleRate: 24000, referenceText: 'What the clip says.', numSteps: 3 });
        assert.deepEqual(call.referenceAudio, { length: 36_000, shared: true, head: Array.from(audio.subarray(0, 4)) });
      }
    } finally {
      await pool.stop();
      recorder.close();
    }
  });

  test('a sentence longer than maxSentenceChars reaches sherpa in pieces cut at its clause punctuation', { timeout: 20_000 }, async () => {
    const recorder = new Recorder();
    const pool = recordingPool(VITS_CONFIG, recorder, undefined, { maxSentenceChars: 60 });
    try {
      await pool.start();
      await recorder.until(1);
      const text = 'Thanks for calling the billing department, where every question is welcome; please hold. Goodbye now.';
      await drain(pool.submit({ text, sid: 0, speed: 1 }, new AbortController().signal, { chunk: (samples) => samples }));
      const calls = (await recorder.until(4)).slice(1);
      assert.deepEqual(calls.map((c) => c.text), ['Thanks for calling the billing department,', 'where every question is welcome; please hold.', 'Goodbye now.']);
    } finally {
      await pool.stop();
      recorder.close();
    }
  });

  test('the other families get speaker and speed in generationConfig, and no reference', { timeout: 20_000 }, async () => {
    const recorder = new Recorder();
    const pool = recordingPool(VITS_CONFIG, recorder);
    try {
      await pool.start();
      const [warmUp] = await recorder.until(1);
      assert.deepEqual(warmUp.generationConfig, { sid: 0, speed: 1 });
      assert.equal(warmUp.referenceAudio, null);
      await drain(pool.submit({ text: 'Only this.', sid: 3, speed: 0.8 }, new AbortController().signal, { chunk: (samples) => samples }));
      const [, call] = await recorder.until(2);
      assert.deepEqual([call.text, call.sid, call.speed], ['Only this.', 3, 0.8]);
      assert.deepEqual(call.generationConfig, { sid: 3, speed: 0.8 });
      assert.equal(call.referenceAudio, null);
    } finally {
      await pool.stop();
      recorder.close();
    }
  });
});

/** A WAV clip of `seconds` of a buzzing tone at 16 kHz (the server resamples it to 24 kHz). */
function toneClip(seconds: number): Buffer {
  const rate = 16000;
  const samples = new Float32Array(Math.round(seconds * rate));
  for (let n = 0; n < samples.length; n++) samples[n] = 0.3 * Math.sin((2 * Math.PI * 140 * n) / rate) + 0.1 * Math.sin((2 * Math.PI * 420 * n) / rate);
  const pcm = int16ToBytes(floatToInt16(samples));
  return Buffer.concat([wavHeader({ sampleRate: rate, encoding: 'pcm_s16le', dataBytes: pcm.length }), pcm]);
}

describe('served with a stand-in ZipVoice model', () => {
  let server: TestServer;
  const TEXT = 'The quick brown fox jumps over the lazy dog.';

  before(async () => {
    server = await startServer({
      config: {
        engines: { zipvoice: { type: 'sherpa-onnx', model: zipvoiceStandIn(), workers: 1, numSteps: 2 } } as never,
        models: { 'zipvoice-local': { extends: 'gepard-1.0', engine: 'zipvoice' } } as never,
      },
    });
  }, { timeout: 60_000 });
  after(async () => {
    await server?.close();
    removeRunDir();
  });

  async function clone(seconds: number, transcript?: string): Promise<string> {
    const form = new FormData();
    form.set('clip', new Blob([toneClip(seconds)]), 'clip.wav');
    form.set('name', `${seconds} s`);
    form.set('language', 'en');
    if (transcript !== undefined) form.set('transcript', transcript);
    const response = await fetch(`${server.url}/voices/clone`, { method: 'POST', body: form });
    const body = (await response.json()) as { id: string };
    assert.equal(response.status, 200, JSON.stringify(body));
    return body.id;
  }

  async function speak(voice: string, model = 'zipvoice-local'): Promise<Response> {
    return server.post('/tts/bytes', {
      model_id: model,
      transcript: TEXT,
      voice: { mode: 'id', id: voice },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: ZIPVOICE_STAND_IN_RATE },
    });
  }

  /**
   * Samples of the model's own audio for TEXT in `voice`, on an idle engine: the voice is measured
   * for loudness first (its measurement would otherwise keep the one worker busy after its first
   * request, and a request made meanwhile is phrased as on a busy engine).
   */
  async function samplesOf(voice: string): Promise<number> {
    const { voices, engines } = server.app.services;
    const stored = (await voices.get(voice, 'org_local'))!;
    await gainOf(engines.get('zipvoice')!, stored, await voices.reference(stored));
    const response = await speak(voice);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.arrayBuffer()).byteLength / 2;
  }

  test('sherpa-onnx detects, probes and loads it as a ZipVoice model that clones', { timeout: 20_000 }, async () => {
    const { data } = (await (await fetch(`${server.url}/models`)).json()) as { data: Record<string, any>[] };
    const model = data.find((m) => m.id === 'zipvoice-local')!;
    assert.deepEqual(model.engine, { id: 'zipvoice', type: 'sherpa-onnx', native_sample_rate: 24000, ready: true, error: null, upstreams: null });
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { engines: Record<string, any>[] };
    assert.equal(ready.engines.find((e) => e.id === 'zipvoice')!.family, 'zipvoice');
    const voices = ((await (await fetch(`${server.url}/voices?limit=100`)).json()) as { data: { id: string }[] }).data;
    assert.ok(!voices.some((v) => v.id === 'zipvoice'), 'a cloning model brings no voice of its own');
  });

  test('a cloned voice speaks; a longer clip or transcript makes audio longer by what reached the model', { timeout: 60_000 }, async (t) => {
    const short = await clone(1.5, 'Hello there.');
    const long = await clone(3, 'Hello there.');
    const wordy = await clone(1.5, 'Hello there, this transcript of the clip is a good deal longer.');
    const [a, b, c] = [await samplesOf(short), await samplesOf(long), await samplesOf(wordy)];
    t.diagnostic(`samples: 1.5 s clip ${a}, 3 s clip ${b}, 1.5 s clip with the longer transcript ${c}`);
    assert.ok(a > 0);
    // 1.5 s more clip: as many more mel frames of output (the stand-in's rule), within a few frames.
    const expected = 1.5 * ZIPVOICE_STAND_IN_RATE;
    assert.ok(Math.abs(b - a - expected) <= 4 * ZIPVOICE_HOP, `a 1.5 s longer clip added ${b - a} samples, expected about ${expected}`);
    // Each transcript token adds 4 frames: the longer transcript adds dozens of tokens.
    assert.ok(c - a >= 4 * ZIPVOICE_HOP * 20, `a longer transcript added ${c - a} samples`);
  });

  test('without a transcript ZipVoice refuses the voice: 409 voice_transcript_missing', { timeout: 20_000 }, async () => {
    const voice = await clone(1.5);
    const response = await speak(voice);
    const body = (await response.json()) as { error_code: string };
    assert.equal(response.status, 409);
    assert.equal(body.error_code, 'voice_transcript_missing');
  });

  test('a built-in voice on the model, and the cloned voice on eSpeak NG, are 409 voice_profile_missing', { timeout: 20_000 }, async () => {
    for (const [voice, model] of [['sarah', 'zipvoice-local'], [await clone(1.5, 'Hello there.'), 'gepard-1.0']]) {
      const response = await speak(voice, model);
      const body = (await response.json()) as { error_code: string };
      assert.equal(response.status, 409, `${voice} on ${model}`);
      assert.equal(body.error_code, 'voice_profile_missing');
    }
  });
});
