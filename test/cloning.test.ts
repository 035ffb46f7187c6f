/**
 * @module test/cloning
 * A cloned voice reaches an engine that clones, through the real server:
 * a voice is cloned over the API from a real clip and its transcript, a
 * model is bound to an engine of the test's own that declares it clones and
 * records what it is given, and speech with that voice — over `/tts/bytes`,
 * the WebSocket and the loudness measurement of its first use — hands the
 * engine the clip, decoded at the stored rate and length, with the
 * transcript. The clip is decoded once per voice. The same voice on
 * `gepard-1.0` (eSpeak NG, which cannot clone) still answers 409
 * `voice_profile_missing`; an engine that needs the transcript refuses a
 * voice without one (409 `voice_transcript_missing`) until PATCH adds it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import { decodeToFloat } from '../src/audio/decode.js';
import type { CloningSupport, Engine, EngineChunk, EngineInfo, EngineInput } from '../src/engines/engine.js';
import { REFERENCE_PASSAGE } from '../src/voices/loudness.js';
import { hasClip, type Voice } from '../src/voices/voice.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

/** Declares that it clones, speaks only cloned voices, and keeps every input it is given. */
class RecordingCloner implements Engine {
  readonly type = 'test-cloner';
  readonly sampleRate = 16000;
  readonly received: EngineInput[] = [];
  private ready = false;

  constructor(
    readonly id: string,
    readonly cloning: CloningSupport,
  ) {}

  async start(): Promise<void> {
    this.ready = true;
  }

  async stop(): Promise<void> {
    this.ready = false;
  }

  isReady(): boolean {
    return this.ready;
  }

  supportsVoice(voice: Voice): boolean {
    return hasClip(voice);
  }

  async *synthesize(input: EngineInput, signal: AbortSignal): AsyncIterable<EngineChunk> {
    this.received.push(input);
    signal.throwIfAborted();
    const samples = new Float32Array(Math.round(this.sampleRate * 0.05 * [...input.text].length));
    for (let n = 0; n < samples.length; n++) samples[n] = 0.1 * Math.sin((2 * Math.PI * 220 * n) / this.sampleRate);
    yield { samples };
  }

  info(): EngineInfo {
    return { id: this.id, type: this.type, sampleRate: this.sampleRate, ready: this.ready };
  }

  /** What the engine was given for `voiceId`. */
  inputsFor(voiceId: string): EngineInput[] {
    return this.received.filter((input) => input.voice.id === voiceId);
  }
}

const CLIP_TEXT = 'This is my voice, recorded for cloning. It says a few clear sentences.';
const CLIP_RATE = 24000;

let server: TestServer;
let cartesia: Cartesia;
let cloner: RecordingCloner;
let strict: RecordingCloner;
let clip: Buffer;
/** Seconds of the uploaded clip, as decoded here. */
let clipSeconds: number;

before(async () => {
  cloner = new RecordingCloner('cloner', { requiresTranscript: false });
  strict = new RecordingCloner('strict-cloner', { requiresTranscript: true });
  server = await startServer({
    config: {
      // The configured type only has to exist: the test's engines stand in for these ids.
      engines: { cloner: { type: 'tone' }, 'strict-cloner': { type: 'tone' } } as never,
      models: { cloned: { extends: 'gepard-1.0', engine: 'cloner' }, 'cloned-strict': { extends: 'gepard-1.0', engine: 'strict-cloner' } } as never,
      voices: { clipSampleRate: CLIP_RATE },
    },
    engines: { cloner, 'strict-cloner': strict },
  });
  cartesia = new Cartesia({ apiKey: 'sk_test_unused', baseURL: server.url, maxRetries: 0 });
  const response = await server.post('/tts/bytes', ttsBody({ transcript: CLIP_TEXT, voice: { mode: 'id', id: 'oliver' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 44100 } }));
  assert.equal(response.status, 200);
  clip = Buffer.from(await response.arrayBuffer());
  const decoded = await decodeToFloat(clip, { container: 'wav', sampleRate: 0 });
  clipSeconds = decoded.samples.length / decoded.sampleRate;
}, { timeout: 30_000 });
after(() => server?.close());

async function clone(fields: Record<string, string>): Promise<Record<string, any>> {
  const form = new FormData();
  form.set('clip', new Blob([clip]), 'me.wav');
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  const response = await fetch(`${server.url}/voices/clone`, { method: 'POST', body: form });
  const body = (await response.json()) as Record<string, any>;
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

async function speak(model: string, voice: string): Promise<Response> {
  return server.post('/tts/bytes', ttsBody({ model_id: model, voice: { mode: 'id', id: voice }, transcript: 'Speak in my voice.', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } }));
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error_code: string; message: string };
  return { status: response.status, code: body.error_code, message: body.message };
}

describe('a cloned voice on an engine that clones', () => {
  let voiceId: string;

  test('the clone endpoint keeps the transcript and the voice object returns it', { timeout: 20_000 }, async () => {
    const voice = await clone({ name: 'Narrator', language: 'en', transcript: `  ${CLIP_TEXT}\n` });
    voiceId = voice.id;
    assert.equal(voice.transcript, CLIP_TEXT, 'trimmed like the other text fields');
    assert.equal(((await (await fetch(`${server.url}/voices/${voiceId}`)).json()) as any).transcript, CLIP_TEXT);
    assert.equal((await cartesia.voices.get('sarah') as any).transcript, null, 'built-ins have none');
  });

  test('/tts/bytes hands the engine the decoded clip at the stored rate and length, with its transcript', { timeout: 20_000 }, async () => {
    const response = await speak('cloned', voiceId);
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok((await response.arrayBuffer()).byteLength > 0);
    const inputs = cloner.inputsFor(voiceId);
    assert.ok(inputs.some((i) => i.text === 'Speak in my voice.'), 'the request itself');
    assert.ok(inputs.some((i) => i.text === REFERENCE_PASSAGE), "the first use measured the voice's loudness, with the clip as well");
    for (const input of inputs) {
      const reference = input.reference;
      assert.ok(reference, `input "${input.text.slice(0, 20)}…" carries the reference`);
      assert.equal(reference.sampleRate, CLIP_RATE);
      assert.ok(Math.abs(reference.audio.length / CLIP_RATE - clipSeconds) < 0.02, `${reference.audio.length / CLIP_RATE} s of reference for a ${clipSeconds} s clip`);
      assert.ok(reference.audio.buffer instanceof SharedArrayBuffer, 'in shared memory, for worker threads');
      assert.equal(reference.text, CLIP_TEXT);
      let peak = 0;
      for (const s of reference.audio) peak = Math.max(peak, Math.abs(s));
      assert.ok(Math.abs(peak - 10 ** (-1 / 20)) < 0.01, `the stored clip is peak-normalised (peak ${peak})`);
    }
  });

  test('the WebSocket hands it the same reference; the clip was decoded once for every request', { timeout: 20_000 }, async () => {
    const decodes = server.app.services.voices.references.decodes;
    const socket = await TestSocket.open(server.url);
    try {
      socket.send({ model_id: 'cloned', voice: { mode: 'id', id: voiceId }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, context_id: 'c1', transcript: 'Over the socket.' });
      await socket.waitFor((e) => e.context_id === 'c1' && (e.type === 'done' || e.type === 'error'));
      assert.deepEqual(socket.of('c1', 'error'), []);
    } finally {
      socket.close();
    }
    const input = cloner.inputsFor(voiceId).find((i) => i.text === 'Over the socket.');
    assert.ok(input?.reference);
    assert.equal(input.reference.text, CLIP_TEXT);
    assert.equal((await speak('cloned', voiceId)).status, 200);
    assert.equal(server.app.services.voices.references.decodes, decodes, 'served from the decoded clip kept for the voice');
    const references = new Set(cloner.inputsFor(voiceId).map((i) => i.reference!.audio));
    assert.equal(references.size, 1, 'one decoded clip shared by every request');
  });

  test('on gepard-1.0 (eSpeak NG cannot clone) the same voice still answers 409 voice_profile_missing', { timeout: 20_000 }, async () => {
    const { status, code, message } = await errorOf(await speak('gepard-1.0', voiceId));
    assert.equal(status, 409);
    assert.equal(code, 'voice_profile_missing');
    assert.match(message, /espeak/);
  });

  test('a built-in voice on the cloning model is 409 voice_profile_missing, and the engine never sees it', { timeout: 20_000 }, async () => {
    const { status, code } = await errorOf(await speak('cloned', 'sarah'));
    assert.equal(status, 409);
    assert.equal(code, 'voice_profile_missing');
    assert.deepEqual(cloner.inputsFor('sarah'), []);
  });
});

describe('an engine that needs the transcript', () => {
  test('a voice cloned without one is 409 voice_transcript_missing until PATCH adds it; null takes it away', { timeout: 20_000 }, async () => {
    const voice = await clone({ name: 'No words', language: 'en' });
    assert.equal(voice.transcript, null);
    const refused = await errorOf(await speak('cloned-strict', voice.id));
    assert.deepEqual([refused.status, refused.code], [409, 'voice_transcript_missing']);
    assert.match(refused.message, new RegExp(`voice ${voice.id} has no transcript.*PATCH /voices/${voice.id}`));
    assert.deepEqual(strict.inputsFor(voice.id), [], 'refused before the engine was asked');

    // The engine that does without a transcript speaks it, with no reference text.
    assert.equal((await speak('cloned', voice.id)).status, 200);
    assert.ok(cloner.inputsFor(voice.id).every((i) => i.reference && i.reference.text === undefined));

    const patch = (transcript: string | null) =>
      fetch(`${server.url}/voices/${voice.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transcript }) });
    const patched = (await (await patch('What the clip says.')).json()) as any;
    assert.equal(patched.transcript, 'What the clip says.');
    assert.equal((await speak('cloned-strict', voice.id)).status, 200);
    assert.ok(strict.inputsFor(voice.id).length > 0);
    assert.ok(strict.inputsFor(voice.id).every((i) => i.reference?.text === 'What the clip says.'));

    assert.equal(((await (await patch(null)).json()) as any).transcript, null);
    assert.equal((await errorOf(await speak('cloned-strict', voice.id))).code, 'voice_transcript_missing');
  });

  test('a transcript that is not a string, or too long, is refused at clone and PATCH', { timeout: 20_000 }, async () => {
    const voice = await clone({ name: 'Checked', language: 'en' });
    const patch = await fetch(`${server.url}/voices/${voice.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transcript: 42 }) });
    assert.deepEqual([patch.status, ((await patch.json()) as any).error_code], [400, 'invalid_request']);
    const form = new FormData();
    form.set('clip', new Blob([clip]), 'me.wav');
    form.set('name', 'Too long');
    form.set('language', 'en');
    form.set('transcript', 'x'.repeat(5001));
    const response = await fetch(`${server.url}/voices/clone`, { method: 'POST', body: form });
    const body = (await response.json()) as any;
    assert.deepEqual([response.status, body.error_code], [400, 'invalid_request']);
    assert.match(body.message, /transcript/);
  });
});
