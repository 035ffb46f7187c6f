/**
 * @module test/deepgram-clients
 * Deepgram's own clients, unchanged, pointed at a real server: `@deepgram/sdk`
 * 5 (`speak.v1.audio.generate`, `speak.v1.connect`) and 4 (`speak.request`,
 * `speak.live`), the Vercel AI SDK's `@ai-sdk/deepgram` speech model, and
 * LiveKit Agents' Deepgram TTS (`stream`). Audio is decoded and measured,
 * `Flushed` comes after its audio, and the books are checked to the character.
 */
import assert from 'node:assert/strict';
import { globalAgent } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { DeepgramClient } from '@deepgram/sdk';
import { createClient, LiveTTSEvents } from 'deepgram-sdk-v4';
import { createDeepgram } from '@ai-sdk/deepgram';
import { experimental_generateSpeech as generateSpeech } from 'ai';
import { initializeLogger } from '@livekit/agents';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import type { AudioFrame } from '@livekit/rtc-node';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { until } from './helpers/poll.js';
import { startServer, type TestServer } from './helpers/server.js';

initializeLogger({ pretty: false, level: 'error' });

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } as any });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const TEXT = 'Hello there, this is a test of the voice. It speaks two sentences.';

async function charged(before: number, expected: number): Promise<void> {
  let spent = 0;
  await until(async () => {
    const { balance, sum } = await balanceOf(server, org.orgId);
    assert.equal(balance, sum, 'the balance is the sum of the ledger');
    spent = before - balance;
    return spent >= expected;
  }, { timeoutMs: 10_000, intervalMs: 0, what: `${expected} characters charged` }).catch(() => {});
  assert.equal(spent, expected, 'charged characters');
}

async function bytesOf(stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function audible(bytes: Buffer, format: Parameters<typeof decodeToFloat>[1], min: number, max: number): Promise<void> {
  const audio = await decodeToFloat(bytes, format);
  const seconds = audio.samples.length / audio.sampleRate;
  assert.ok(seconds > min && seconds < max, `${seconds} s`);
  assert.ok(rms(audio.samples) > 0.02, 'audible');
}

function toBuffer(data: unknown): Buffer | null {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

describe('@deepgram/sdk 5', () => {
  const client = () => new DeepgramClient({ apiKey: org.key, baseUrl: server.url, environment: { base: server.url, production: server.url.replace(/^http/, 'ws'), agent: server.url.replace(/^http/, 'ws') } } as any);

  test('speak.v1.audio.generate: WAV and MP3, with the headers', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const wav = await client().speak.v1.audio.generate({ text: TEXT, model: 'aura-2-thalia-en', encoding: 'linear16', container: 'wav', sample_rate: 16000 } as any).withRawResponse();
    assert.equal(wav.rawResponse.headers.get('dg-model-name'), 'aura-2-thalia-en');
    await audible(Buffer.from(await wav.data.arrayBuffer()), { container: 'wav', sampleRate: 16000 }, 2, 8);
    const mp3 = await client().speak.v1.audio.generate({ text: TEXT, model: 'aura-2-apollo-en' } as any);
    await audible(Buffer.from(await mp3.arrayBuffer()), { container: 'mp3', sampleRate: 22050 }, 2, 8);
    await charged(before, 2 * TEXT.length);
  });

  test('an unknown model is its BadRequestError', { timeout: 30_000 }, async () => {
    await assert.rejects(client().speak.v1.audio.generate({ text: TEXT, model: 'aura-nope-en' } as any), (err: any) => {
      assert.equal(err.statusCode, 400);
      assert.equal(err.body.err_msg, 'Bad Request: No such model/version combination found.');
      return true;
    });
  });

  test('speak.v1.connect: Metadata, audio, Flushed after it, Clear answered by Cleared, Close', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const socket = await client().speak.v1.connect({ model: 'aura-2-thalia-en', encoding: 'linear16', sample_rate: 24000, reconnectAttempts: 0 } as any);
    // Audio comes as Blobs (the SDK's socket is browser-shaped), read into buffers in order.
    const events: (Record<string, any> | Promise<Buffer>)[] = [];
    const closed = new Promise<number>((resolve) => socket.on('close', (event: any) => resolve(event.code)));
    socket.on('message', (message: unknown) => {
      if (message instanceof Blob) events.push(message.arrayBuffer().then((data) => Buffer.from(data)));
      else events.push(toBuffer(message) ? Promise.resolve(toBuffer(message)!) : typeof message === 'string' ? JSON.parse(message) : (message as Record<string, any>));
    });
    socket.connect();
    await socket.waitForOpen();
    socket.sendText({ type: 'Speak', text: TEXT } as any);
    socket.sendFlush({ type: 'Flush' } as any);
    const isAudio = (e: unknown): e is Promise<Buffer> => e instanceof Promise;
    await until(() => events.some((e) => !isAudio(e) && e.type === 'Flushed'), { timeoutMs: 15_000, what: 'Flushed' });
    const at = events.findIndex((e) => !isAudio(e) && e.type === 'Flushed');
    assert.equal((events[0] as Record<string, any>).type, 'Metadata');
    const audio = Buffer.concat(await Promise.all(events.slice(0, at).filter(isAudio)));
    await audible(audio, { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 }, 2, 8);
    socket.sendClear({ type: 'Clear' } as any);
    await until(() => events.some((e) => !isAudio(e) && e.type === 'Cleared'), { timeoutMs: 15_000, what: 'Cleared' });
    socket.sendClose({ type: 'Close' } as any);
    assert.equal(await closed, 1000);
    await charged(before, TEXT.length);
  });
});

describe('@deepgram/sdk 4', () => {
  const client = () =>
    createClient(org.key, { global: { fetch: { options: { url: server.url } }, websocket: { options: { url: server.url.replace(/^http/, 'ws') } } } });

  test('speak.request: the stream and its headers', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const response = await client().speak.request({ text: TEXT }, { model: 'aura-2-thalia-en', encoding: 'linear16', container: 'none', sample_rate: 16000 });
    const headers = await response.getHeaders();
    assert.equal(headers.get('content-type'), 'audio/l16;rate=16000');
    assert.equal(headers.get('dg-char-count'), String(TEXT.length));
    const stream = await response.getStream();
    await audible(await bytesOf(stream!), { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 }, 2, 8);
    // Its default model, aura-2-thalia-en, and MP3.
    const mp3 = await client().speak.request({ text: 'Hello.' });
    assert.ok((await bytesOf((await mp3.getStream())!)).length > 1000);
    await charged(before, TEXT.length + 'Hello.'.length);
  });

  test('speak.live: Metadata, audio, Flushed, Close', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const live = client().speak.live({ model: 'aura-asteria-en', encoding: 'mulaw', sample_rate: 8000 });
    const order: string[] = [];
    const audio: Buffer[] = [];
    live.on(LiveTTSEvents.Metadata, () => order.push('Metadata'));
    live.on(LiveTTSEvents.Audio, (data: unknown) => (order.push('audio'), audio.push(toBuffer(data)!)));
    live.on(LiveTTSEvents.Flushed, () => order.push('Flushed'));
    const closed = new Promise<void>((resolve) => live.on(LiveTTSEvents.Close, () => resolve()));
    await new Promise<void>((resolve) => live.on(LiveTTSEvents.Open, () => resolve()));
    live.sendText(TEXT);
    live.flush();
    await until(() => order.includes('Flushed'), { timeoutMs: 15_000, what: 'Flushed' });
    assert.equal(order[0], 'Metadata');
    assert.equal(order.lastIndexOf('audio') < order.indexOf('Flushed'), true, 'Flushed after the audio');
    await audible(Buffer.concat(audio), { container: 'raw', encoding: 'pcm_mulaw', sampleRate: 8000 }, 2, 8);
    live.requestClose();
    await closed;
    await charged(before, TEXT.length);
  });
});

describe('@ai-sdk/deepgram', () => {
  test('generateSpeech through the provider, its fetch aimed here', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const provider = createDeepgram({ apiKey: org.key, fetch: (input, init) => fetch(String(input).replace('https://api.deepgram.com', server.url), init) });
    const mp3 = await generateSpeech({ model: provider.speech('aura-2-helena-en'), text: TEXT });
    assert.equal(mp3.audio.mediaType, 'audio/mpeg');
    await audible(Buffer.from(mp3.audio.uint8Array), { container: 'mp3', sampleRate: 22050 }, 2, 8);
    const wav = await generateSpeech({ model: provider.speech('aura-2-helena-en'), text: TEXT, outputFormat: 'wav' });
    await audible(Buffer.from(wav.audio.uint8Array), { container: 'wav', sampleRate: 24000 }, 2, 8);
    await charged(before, 2 * TEXT.length);
  });
});

describe("LiveKit Agents' Deepgram TTS", () => {
  test('stream: a sentence at a time, Flushed ends the segment; the frames measured', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const tts = new deepgram.TTS({ apiKey: org.key, baseUrl: server.url, model: 'aura-2-andromeda-en', sampleRate: 24000 });
    try {
      const stream = tts.stream({ connOptions: { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 10_000 } });
      stream.pushText(TEXT);
      stream.flush();
      stream.endInput();
      const frames: AudioFrame[] = [];
      for await (const item of stream) if (item !== deepgram.SynthesizeStream.END_OF_STREAM && (item as any).frame) frames.push((item as any).frame);
      const samples = frames.reduce((n, f) => n + f.samplesPerChannel, 0);
      assert.ok(frames.every((f) => f.sampleRate === 24000));
      assert.ok(samples / 24000 > 2 && samples / 24000 < 8, `${samples / 24000} s`);
      const pcm = Buffer.concat(frames.map((f) => Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)));
      assert.ok(rms((await decodeToFloat(pcm, { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 })).samples) > 0.02);
    } finally {
      await tts.close();
    }
    // The plugin sends each sentence with a space after it, instead of the one between them.
    await charged(before, TEXT.length + 1);
  });
});

describe("LiveKit Agents' Deepgram TTS over TLS on port 443", () => {
  // The plugin's REST call is `node:https` to port 443 of its base URL's host, whatever the URL's
  // port: a second server here serves HTTPS on 443 with its development CA, which the process trusts.
  test('synthesize: raw PCM at the asked rate, charged per character', { timeout: 60_000 }, async () => {
    let tls: TestServer;
    try {
      tls = await startServer({ config: { accounts: { enabled: true }, server: { port: 443, tls: { selfSigned: true } } } as any });
    } catch (err) {
      // The tests run as root (developers' machines and CI alike), where 443 can be bound.
      throw new Error(`port 443 cannot be bound: ${(err as Error).message}`);
    }
    const ca = globalAgent.options.ca;
    globalAgent.options.ca = tls.ca;
    const tts = new deepgram.TTS({ apiKey: '', baseUrl: 'https://127.0.0.1', model: 'aura-2-andromeda-en', sampleRate: 16000 });
    try {
      const account = await newOrg(tls, { credits: 1_000_000 });
      (tts as any).opts.apiKey = account.key;
      const before = (await balanceOf(tls, account.orgId)).balance;
      const frames: AudioFrame[] = [];
      for await (const audio of tts.synthesize(TEXT)) frames.push(audio.frame);
      const samples = frames.reduce((n, f) => n + f.samplesPerChannel, 0);
      assert.ok(frames.every((f) => f.sampleRate === 16000));
      assert.ok(samples / 16000 > 2 && samples / 16000 < 8, `${samples / 16000} s`);
      const pcm = Buffer.concat(frames.map((f) => Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)));
      assert.ok(rms((await decodeToFloat(pcm, { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 })).samples) > 0.02);
      await until(async () => before - (await balanceOf(tls, account.orgId)).balance === TEXT.length, { timeoutMs: 10_000, what: 'charged per character' });
    } finally {
      globalAgent.options.ca = ca;
      await tts.close();
      await tls.close();
    }
  });
});
