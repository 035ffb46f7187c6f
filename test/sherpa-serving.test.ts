/**
 * @module test/sherpa-serving
 * A local neural model (the stand-in Piper model the test writes) bound to a
 * sherpa-onnx engine and served to real clients: `/tts/bytes`, SSE and the
 * WebSocket through the Cartesia SDK, `/v1/audio/speech` through the OpenAI
 * SDK, each decoding to the requested rate with the length the engine makes.
 * Beside it, three broken models (a corrupt graph, a truncated tokens file, a
 * Piper export without metadata), each of which would end a process that
 * loaded it: the server starts anyway, reports each reason in `/readyz` and
 * `GET /models`, answers their requests with 503, and serves the rest.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import OpenAI from 'openai';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { brokenModel, removeRunDir, standInModel, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { gainOf } from '../src/synthesis/voice-gain.js';

let server: TestServer;
let cartesia: Cartesia;
let openai: OpenAI;

const BAD = { 'bad-corrupt': 'corrupt', 'bad-tokens': 'truncated-tokens', 'bad-metadata': 'no-metadata' } as const;

before(async () => {
  const model = standInModel();
  const engines: Record<string, unknown> = { piper: { type: 'sherpa-onnx', model, workers: 1 } };
  const models: Record<string, unknown> = { 'piper-local': { extends: 'gepard-1.0', engine: 'piper' } };
  for (const [id, kind] of Object.entries(BAD)) {
    engines[id] = { type: 'sherpa-onnx', model: brokenModel(kind), workers: 1 };
    models[id] = { extends: 'gepard-1.0', engine: id };
  }
  server = await startServer({ config: { engines: engines as never, models: models as never } });
  // The voices the tests speak, measured for loudness first: a voice's first request is otherwise
  // spoken at unity gain and its measurement then keeps the one worker busy, which changes how a
  // request made meanwhile is phrased (the tests compare lengths with the engine's own).
  const engine = server.app.services.engines.get('piper')!;
  for (const id of ['sarah', 'jordan', 'piper']) await gainOf(engine, (await server.app.services.voices.get(id, null))!);
  cartesia = new Cartesia({ apiKey: 'sk_test_unused', baseURL: server.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: 'sk_test_unused', baseURL: `${server.url}/v1`, maxRetries: 0 });
}, { timeout: 60_000 });
after(async () => {
  await server?.close();
  removeRunDir();
});

const TEXT = 'The quick brown fox jumps over the lazy dog. It was a sunny day.';
const VOICE = { mode: 'id' as const, id: 'sarah' };

/** Seconds of the engine's own audio for TEXT: raw PCM at the native rate. */
async function nativeSeconds(): Promise<number> {
  const response = await server.post('/tts/bytes', {
    model_id: 'piper-local',
    transcript: TEXT,
    voice: VOICE,
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE },
  });
  assert.equal(response.status, 200);
  return (await response.arrayBuffer()).byteLength / 2 / STAND_IN_RATE;
}

test('GET /models shows the sherpa engine, its native rate and readiness; the broken ones with their reasons', { timeout: 20_000 }, async () => {
  const { data } = (await (await fetch(`${server.url}/models`)).json()) as { data: Record<string, any>[] };
  const byId = Object.fromEntries(data.map((m) => [m.id, m]));
  assert.deepEqual(byId['piper-local'].engine, { id: 'piper', type: 'sherpa-onnx', native_sample_rate: STAND_IN_RATE, ready: true, error: null, upstreams: null });
  assert.match(byId['bad-corrupt'].engine.error, /failed to load the model.*Protobuf parsing failed/);
  assert.match(byId['bad-tokens'].engine.error, /tokens\.txt line 41 is not "<symbol> <id>"/);
  assert.match(byId['bad-metadata'].engine.error, /no sherpa-onnx metadata \(sample_rate is missing\)/);
  for (const id of Object.keys(BAD)) assert.equal(byId[id].engine.ready, false);
  assert.equal(byId['gepard-1.0'].engine.ready, true);
});

test('/readyz stays 200, degraded, listing each failed engine and the healthy ones', { timeout: 20_000 }, async () => {
  const response = await fetch(`${server.url}/readyz`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { status: string; engines: Record<string, any>[]; failed: { id: string; reason: string }[] };
  assert.equal(body.status, 'degraded');
  assert.deepEqual(body.failed.map((f) => f.id).sort(), Object.keys(BAD).sort());
  const piper = body.engines.find((e) => e.id === 'piper')!;
  assert.equal(piper.ready, true);
  assert.equal(piper.family, 'vits');
  assert.equal(piper.speakers, 1);
});

test('a broken model answers 503 engine_unavailable; the other models keep serving', { timeout: 20_000 }, async () => {
  for (const id of Object.keys(BAD)) {
    const response = await server.post('/tts/bytes', { model_id: id, transcript: 'Hello.', voice: VOICE, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } });
    assert.equal(response.status, 503, id);
    assert.equal(((await response.json()) as { error_code: string }).error_code, 'engine_unavailable');
  }
  const espeak = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript: 'Still serving.', voice: VOICE, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } });
  assert.equal(espeak.status, 200);
  assert.ok((await espeak.arrayBuffer()).byteLength > 10_000);
});

test('the Cartesia SDK: /tts/bytes WAV at another rate has the engine\'s length and real level', { timeout: 20_000 }, async () => {
  const seconds = await nativeSeconds();
  assert.ok(seconds > 1.5, `${seconds} s`);
  const response = await cartesia.tts.generate({ model_id: 'piper-local', transcript: TEXT, voice: VOICE, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } });
  const decoded = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 16000 });
  assert.equal(decoded.sampleRate, 16000);
  assert.ok(Math.abs(decoded.samples.length / 16000 - seconds) < 0.01, `${decoded.samples.length / 16000} vs ${seconds}`);
  assert.ok(rms(decoded.samples) > 0.05);
});

test('the Cartesia SDK over SSE: chunks reassemble to the engine\'s length at the requested rate', { timeout: 20_000 }, async () => {
  const seconds = await nativeSeconds();
  const parts: Buffer[] = [];
  let chunks = 0;
  for await (const event of await cartesia.tts.generateSSE({
    model_id: 'piper-local',
    transcript: TEXT,
    voice: VOICE,
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
  })) {
    if (event.type === 'chunk') {
      parts.push(Buffer.from(event.data!, 'base64'));
      chunks++;
    }
  }
  const bytes = Buffer.concat(parts);
  assert.ok(chunks >= 2, `${chunks} chunks: one sentence after another`);
  assert.ok(Math.abs(bytes.length / 2 / 24000 - seconds) < 0.01, `${bytes.length / 2 / 24000} vs ${seconds}`);
});

test('the WebSocket: a turn streams the engine\'s audio and ends with done', { timeout: 20_000 }, async () => {
  const seconds = await nativeSeconds();
  const socket = await TestSocket.open(server.url);
  try {
    socket.send({ model_id: 'piper-local', voice: VOICE, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 44100 }, transcript: TEXT, context_id: 'c1' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'c1');
    const bytes = socket.audio('c1').length;
    assert.ok(socket.of('c1', 'chunk').length >= 2, 'one sentence after another');
    assert.ok(Math.abs(bytes / 2 / 44100 - seconds) < 0.01, `${bytes / 2 / 44100} vs ${seconds}`);
  } finally {
    socket.close();
  }
});

test('the OpenAI SDK: /v1/audio/speech wav and pcm at 24 kHz with the engine\'s length', { timeout: 20_000 }, async () => {
  const seconds = await nativeSeconds();
  const wav = await openai.audio.speech.create({ model: 'piper-local', voice: 'alloy', input: TEXT, response_format: 'wav' });
  const decoded = await decodeToFloat(Buffer.from(await wav.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 24000 });
  assert.equal(decoded.sampleRate, 24000);
  assert.ok(Math.abs(decoded.samples.length / 24000 - seconds) < 0.01, `${decoded.samples.length / 24000} vs ${seconds}`);
  const pcm = await openai.audio.speech.create({ model: 'piper-local', voice: 'alloy', input: TEXT, response_format: 'pcm', stream: true } as never);
  assert.ok(Math.abs((await pcm.arrayBuffer()).byteLength / 2 / 24000 - seconds) < 0.01);
});

test('the single-speaker model brings a built-in voice named after its engine', { timeout: 20_000 }, async () => {
  const response = await fetch(`${server.url}/voices/piper`);
  assert.equal(response.status, 200);
  const bytes = await server.post('/tts/bytes', { model_id: 'piper-local', transcript: 'Hello.', voice: { mode: 'id', id: 'piper' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } });
  assert.equal(bytes.status, 200);
});

test('SSML <phoneme> and <lang> are spoken as their text: sherpa-onnx takes neither phonemes nor a language per text', { timeout: 20_000 }, async () => {
  const pcm = async (transcript: string) => {
    const response = await server.post('/tts/bytes', { model_id: 'piper-local', transcript, voice: VOICE, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE } });
    assert.equal(response.status, 200, transcript);
    return Buffer.from(await response.arrayBuffer());
  };
  const plain = await pcm('<speak>I say tomato, you say tomato.</speak>');
  const phonemes = await pcm('<speak>I say <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>, you say <phoneme alphabet="x-sampa" ph=\'t@"mA:toU\'>tomato</phoneme>.</speak>');
  const language = await pcm('<speak><lang xml:lang="fr-FR">I say tomato, you say tomato.</lang></speak>');
  assert.ok(plain.length > 0);
  assert.ok(plain.equals(phonemes), 'the phonemes are not spoken: the text is');
  assert.ok(plain.equals(language), 'the language changes nothing');
  // Why: its phonemizer reads eSpeak's phoneme input as text (each bracket and mnemonic a token of its own).
  const word = (await pcm('hello')).length;
  const bracketed = (await pcm("[[h@l'oU]]")).length;
  assert.ok(bracketed > word * 2, `[[h@l'oU]] ${bracketed} bytes vs hello ${word}`);
});
