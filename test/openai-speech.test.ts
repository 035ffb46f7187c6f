/**
 * @module test/openai-speech
 * An unchanged OpenAI integration (the `openai` SDK with `baseURL` pointed
 * here): every response format, aliases for model and voice, streaming as
 * audio and as SSE events, errors through the SDK's error classes with
 * `code` and `param`, and the same billing and cost headers as /tts/bytes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
let client: OpenAI;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } });
  org = await newOrg(server, { credits: 100_000 });
  client = new OpenAI({ apiKey: org.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
after(() => server.close());

const INPUT = 'The quick brown fox jumps over the lazy dog.';

test('mp3 (the default) is 44.1 kHz speech; wav and pcm are 24 kHz 16-bit', async () => {
  const mp3 = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: INPUT });
  assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
  const mp3Audio = await decodeToFloat(Buffer.from(await mp3.arrayBuffer()), { container: 'mp3', sampleRate: 44100 });
  assert.equal(mp3Audio.sampleRate, 44100);
  assert.ok(rms(mp3Audio.samples) > 0.02);

  const wav = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'nova', input: INPUT, response_format: 'wav', instructions: 'Speak cheerfully' });
  const wavAudio = await decodeToFloat(Buffer.from(await wav.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 24000 });
  assert.equal(wavAudio.sampleRate, 24000);
  assert.ok(wavAudio.samples.length / 24000 > 1.5);

  const pcm = await client.audio.speech.create({ model: 'omnivoice', voice: { id: 'emma' } as any, input: INPUT, response_format: 'pcm' });
  assert.equal(pcm.headers.get('content-type'), 'application/octet-stream');
  const pcmBytes = Buffer.from(await pcm.arrayBuffer());
  assert.ok(Math.abs(pcmBytes.length / 2 / 24000 - wavAudio.samples.length / 24000) < 0.6);
  assert.equal(pcm.headers.get('x-request-credits'), String(INPUT.length));
});

test('the model default voice applies when voice is absent; speed changes duration', async () => {
  const body = { model: 'omnivoice', input: INPUT, response_format: 'pcm' };
  const normal = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: org.auth, body: JSON.stringify(body) });
  assert.equal(normal.status, 200);
  const fast = await client.audio.speech.create({ model: 'omnivoice', voice: 'sarah', input: INPUT, response_format: 'pcm', speed: 1.5 });
  const normalSeconds = (await normal.arrayBuffer()).byteLength / 48000;
  const fastSeconds = (await fast.arrayBuffer()).byteLength / 48000;
  assert.ok(fastSeconds < normalSeconds * 0.8, `${fastSeconds} vs ${normalSeconds}`);
});

test('stream: true relays audio progressively; stream_format sse sends speech.audio.delta and done', async () => {
  const streamed = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'pcm', stream: true } as any);
  const reader = streamed.body!.getReader();
  let chunks = 0;
  let bytes = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    chunks++;
    bytes += r.value.length;
  }
  assert.ok(chunks > 1, `${chunks} reads`);
  assert.ok(bytes / 48000 > 1.5);

  const events = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'pcm', stream_format: 'sse' } as any);
  assert.match(events.headers.get('content-type')!, /^text\/event-stream/);
  const parsed = (await events.text()).split('\n\n').filter((b) => b.trim()).map((b) => JSON.parse(b.replace(/^data: /, '')));
  const deltas = parsed.filter((e) => e.type === 'speech.audio.delta');
  assert.ok(deltas.length > 1);
  const audio = Buffer.concat(deltas.map((e) => Buffer.from(e.audio, 'base64')));
  assert.ok(Math.abs(audio.length - bytes) < 24000, `${audio.length} vs ${bytes}`);
  const done = parsed.at(-1);
  assert.equal(done.type, 'speech.audio.done');
  assert.equal(done.usage.input_tokens, INPUT.length);
});

test('errors arrive through the SDK classes with code and param', async () => {
  const cases: [Record<string, unknown>, number, string, string | null][] = [
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'opus' }, 400, 'invalid_output_format', 'response_format'],
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'mp3', stream: true }, 400, 'invalid_output_format', 'response_format'],
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, speed: 4 }, 400, 'invalid_generation_config', 'speed'],
    [{ model: 'tts-1', voice: 'nobody', input: INPUT }, 404, 'voice_not_found', 'voice'],
    [{ model: 'no-model', voice: 'alloy', input: INPUT }, 404, 'model_not_found', 'model'],
    [{ model: 'tts-1', voice: 'alloy', input: '' }, 400, 'missing_transcript', 'input'],
    [{ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(5001) }, 400, 'input_too_long', 'input'],
    [{ model: 'gepard-1.0', input: INPUT, response_format: 'wav' }, 400, 'missing_voice', 'voice'],
  ];
  for (const [body, status, code, param] of cases) {
    await assert.rejects(client.audio.speech.create(body as any), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, status, JSON.stringify(body));
      assert.equal(err.code, code);
      assert.equal(err.param, param);
      assert.equal(err.type, status === 404 ? 'not_found_error' : 'invalid_request_error');
      assert.ok(err.requestID, 'request id from x-request-id');
      return true;
    });
  }
  const unauthenticated = new OpenAI({ apiKey: 'sk_wrong', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(unauthenticated.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hi' }), (err: unknown) => err instanceof OpenAI.AuthenticationError && err.code === 'invalid_api_key');
  const get = await fetch(`${server.url}/v1/audio/speech`);
  assert.equal(get.status, 405);
  assert.equal(((await get.json()) as any).error.code, 'method_not_allowed');
});

test('a format refused names, in OpenAI\'s terms, the formats this model takes on this path', async () => {
  const cases: [Record<string, unknown>, string][] = [
    // tts-1 is bound to omnivoice, which has no Ogg Opus; nor MP3 on a stream.
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'opus' }, 'response_format opus is not available for tts-1; use mp3, wav or pcm'],
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'mp3', stream: true }, 'response_format mp3 is not available for tts-1 when streaming; use wav or pcm'],
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'aac' }, 'response_format aac is not supported; use mp3, wav or pcm'],
    [{ model: 'tts-1', voice: 'alloy', input: INPUT, response_format: 'flac', stream: true }, 'response_format flac is not supported; use wav or pcm'],
    [{ model: 'voicegate-1.0', voice: 'alloy', input: INPUT, response_format: 'aac' }, 'response_format aac is not supported; use mp3, opus, wav or pcm'],
    [{ model: 'gepard-1.0', voice: 'alloy', input: INPUT, response_format: 'mp3' }, 'response_format mp3 is not available for gepard-1.0; use wav or pcm'],
    [{ model: 'gepard-1.0', voice: 'alloy', input: INPUT, response_format: 'wav', stream: true }, 'response_format wav is not available for gepard-1.0 when streaming; use pcm'],
  ];
  for (const [body, message] of cases) {
    await assert.rejects(client.audio.speech.create(body as any), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 400, JSON.stringify(body));
      assert.equal(err.code, 'invalid_output_format');
      assert.equal(err.param, 'response_format');
      assert.equal((err.error as { message: string }).message, message, JSON.stringify(body));
      return true;
    });
  }
});

test('billing matches /tts/bytes: one row per request, charged on success only', async () => {
  const payer = await newOrg(server, { credits: 1000 });
  const paying = new OpenAI({ apiKey: payer.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const response = await paying.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Twelve chars', response_format: 'wav' });
  await response.arrayBuffer();
  assert.equal(response.headers.get('x-request-cost-usd'), '0.00036');
  assert.equal(response.headers.get('x-credits-remaining'), '988');
  await assert.rejects(paying.audio.speech.create({ model: 'tts-1', voice: 'nobody', input: 'Not charged' }));
  const rows = (await server.app.services.accounts!.store.ledger.list(payer.orgId, { limit: 10 })).data;
  assert.deepEqual(rows.map((r) => [r.kind, r.endpoint]), [['charge', 'openai.speech'], ['credit', null]]);
  assert.deepEqual(await balanceOf(server, payer.orgId), { balance: 988, sum: 988 });
});
