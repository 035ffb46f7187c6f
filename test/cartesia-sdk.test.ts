/**
 * @module test/cartesia-sdk
 * The official Cartesia SDK pointed at the server: `tts.generate` returns a
 * decodable WAV, and errors arrive through the SDK's error classes with the
 * documented body.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let client: Cartesia;
before(async () => {
  server = await startServer();
  client = new Cartesia({ apiKey: 'sk_test_unused', baseURL: server.url, maxRetries: 0 });
});
after(() => server.close());

test('client.tts.generate returns a WAV of speech at the requested rate', async () => {
  const response = await client.tts.generate({
    model_id: 'gepard-1.0',
    transcript: 'Today is a wonderful day to build something people love!',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const decoded = await decodeToFloat(bytes, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 });
  assert.equal(decoded.sampleRate, 22050);
  assert.ok(decoded.samples.length / 22050 > 2, 'a sentence lasts over two seconds');
  assert.ok(rms(decoded.samples) > 0.02);
});

test('omnivoice mp3 through the SDK', async () => {
  const response = await client.tts.generate({
    model_id: 'omnivoice',
    transcript: 'Your appointment is confirmed for Tuesday at 2 PM.',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 },
  });
  assert.equal(response.headers.get('content-type'), 'audio/mpeg');
  const decoded = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'mp3', sampleRate: 44100 });
  assert.equal(decoded.sampleRate, 44100);
  assert.ok(rms(decoded.samples) > 0.02);
});

test('errors surface as the SDK error classes with the documented body', async () => {
  await assert.rejects(
    client.tts.generate({
      model_id: 'gepard-1.0',
      transcript: 'Hello',
      voice: { mode: 'id', id: 'no-such-voice' },
      output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
    }),
    (err: unknown) => {
      assert.ok(err instanceof Cartesia.NotFoundError, String(err));
      const body = err.error as Record<string, unknown>;
      assert.equal(body.error_code, 'voice_not_found');
      assert.equal(body.status_code, 404);
      assert.equal(body.title, 'Voice not found');
      assert.match(err.message, /^404 voice no-such-voice does not exist/);
      return true;
    },
  );
  await assert.rejects(
    client.tts.generate({
      model_id: 'gepard-1.0',
      transcript: 'Hello',
      voice: { mode: 'id', id: 'sarah' },
      output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 },
    }),
    (err: unknown) => err instanceof Cartesia.BadRequestError && (err.error as { error_code: string }).error_code === 'invalid_output_format',
  );
});
