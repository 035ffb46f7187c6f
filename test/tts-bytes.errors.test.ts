/**
 * @module test/tts-bytes.errors
 * Every documented /tts/bytes error, through a real server and fetch: the
 * status, the code, and the envelope with the request id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
before(async () => (server = await startServer()));
after(() => server.close());

async function expectError(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.error_code, code);
  assert.equal(body.error, code);
  assert.equal(body.status_code, status);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.detail, body.message);
  assert.equal(body.request_id, response.headers.get('x-request-id'));
  assert.match(String(body.request_id), /\S/);
  return body;
}

describe('voice specifier', () => {
  test('no voice → 400 missing_voice', async () => {
    const { voice: _, ...body } = ttsBody();
    await expectError(await server.post('/tts/bytes', body), 400, 'missing_voice');
  });
  test('voice as a plain string, {id} or {mode: "id", id} is the same voice', async () => {
    const audio = async (voice: unknown) => {
      const response = await server.post('/tts/bytes', ttsBody({ voice, transcript: 'Hi.' }));
      assert.equal(response.status, 200);
      return Buffer.from(await response.arrayBuffer());
    };
    // eSpeak's voices breathe (random noise), so the clips are compared by length.
    const nested = await audio({ mode: 'id', id: 'sarah' });
    assert.equal((await audio('sarah')).length, nested.length);
    assert.equal((await audio({ id: 'sarah' })).length, nested.length);
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: '' })), 400, 'missing_voice_id');
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: 42 })), 400, 'missing_voice');
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: ['sarah'] })), 400, 'missing_voice');
  });
  test('top-level voice_id is not supported → 400 missing_voice', async () => {
    const { voice: _, ...body } = ttsBody();
    await expectError(await server.post('/tts/bytes', { ...body, voice_id: 'sarah' }), 400, 'missing_voice');
  });
  test('no voice.id → 400 missing_voice_id', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id' } })), 400, 'missing_voice_id');
  });
  test('empty voice.id → 400 missing_voice_id', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: '' } })), 400, 'missing_voice_id');
  });
  test('mode other than id → 400 unknown_voice_mode', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: 'embedding', id: 'sarah' } })), 400, 'unknown_voice_mode');
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: null, id: 'sarah' } })), 400, 'unknown_voice_mode');
  });
  test('unknown voice id → 404 voice_not_found', async () => {
    const body = await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: 'nobody' } })), 404, 'voice_not_found');
    assert.match(String(body.message), /nobody/);
  });
});

describe('transcript', () => {
  test('missing, empty or not a string → 400 missing_transcript', async () => {
    const { transcript: _, ...body } = ttsBody();
    await expectError(await server.post('/tts/bytes', body), 400, 'missing_transcript');
    await expectError(await server.post('/tts/bytes', ttsBody({ transcript: '' })), 400, 'missing_transcript');
    await expectError(await server.post('/tts/bytes', ttsBody({ transcript: 42 })), 400, 'missing_transcript');
  });
  test('2,001 emoji (4,002 UTF-16 units) for gepard-1.0 → 400 input_too_long with the documented message', async () => {
    const body = await expectError(await server.post('/tts/bytes', ttsBody({ transcript: '😀'.repeat(2001) })), 400, 'input_too_long');
    assert.equal(
      body.message,
      'transcript is 2001 characters; the maximum is 2000 per request — split longer text across requests or WebSocket messages',
    );
  });
  test('2,000 emoji are within the limit: code points, not UTF-16 units, are counted', async () => {
    const response = await server.post('/tts/bytes', ttsBody({ transcript: '😀'.repeat(2000), output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 } }));
    assert.equal(response.status, 200, await response.clone().text());
    await response.arrayBuffer();
  });
  test('whitespace counts: 1,999 letters plus two newlines is over', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ transcript: `\n${'a'.repeat(1999)}\n` })), 400, 'input_too_long');
  });
  test('omnivoice allows 5,000 and refuses 5,001', async () => {
    const body = await expectError(
      await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: 'b'.repeat(5001) })),
      400,
      'input_too_long',
    );
    assert.match(String(body.message), /5001 characters; the maximum is 5000/);
  });
});

describe('body', () => {
  test('65,537 bytes → 413 payload_too_large, checked before parsing', async () => {
    const body = JSON.stringify(ttsBody({ transcript: 'x' }));
    const padded = body.slice(0, -1) + ',"pad":"' + 'p'.repeat(65537 - body.length - 9) + '"}';
    assert.equal(Buffer.byteLength(padded), 65537);
    await expectError(await server.post('/tts/bytes', padded), 413, 'payload_too_large');
    // Not JSON at all, but too large: the size is what is reported.
    await expectError(await server.post('/tts/bytes', 'z'.repeat(70000)), 413, 'payload_too_large');
  });
  test('exactly 65,536 bytes is accepted', async () => {
    const body = JSON.stringify(ttsBody({ transcript: 'Hi.' }));
    const padded = body.slice(0, -1) + ',"pad":"' + 'p'.repeat(65536 - body.length - 9) + '"}';
    assert.equal(Buffer.byteLength(padded), 65536);
    const response = await server.post('/tts/bytes', padded);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  });
  test('malformed JSON, JSON that is not an object, and no body → 400 invalid_json', async () => {
    await expectError(await server.post('/tts/bytes', '{"model_id": "gepard-1.0",'), 400, 'invalid_json');
    await expectError(await server.post('/tts/bytes', '[1,2]'), 400, 'invalid_json');
    await expectError(await server.post('/tts/bytes', '"text"'), 400, 'invalid_json');
    await expectError(await server.post('/tts/bytes', 'null'), 400, 'invalid_json');
    await expectError(await fetch(server.url + '/tts/bytes', { method: 'POST' }), 400, 'invalid_json');
  });
  test('any content type is read as JSON (curl -d sends a form type)', async () => {
    const response = await server.post('/tts/bytes', ttsBody(), { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  });
});

describe('routing', () => {
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
    test(`${method} /tts/bytes → 405 method_not_allowed with Allow: POST`, async () => {
      const response = await fetch(server.url + '/tts/bytes', { method });
      assert.equal(response.headers.get('allow'), 'POST');
      await expectError(response, 405, 'method_not_allowed');
    });
  }
  test('unknown route → 404 not_found', async () => {
    await expectError(await fetch(server.url + '/tts/nothing'), 404, 'not_found');
  });
  test('the request id is always the server\'s own, whatever x-request-id the client sent', async () => {
    for (const given of ['trace-123', 'bad id\u00e9']) {
      const response = await fetch(server.url + '/tts/bytes', { headers: { 'x-request-id': given } });
      const id = String(response.headers.get('x-request-id'));
      assert.match(id, /^req_[0-9a-f]{24}$/);
      assert.equal(((await response.json()) as { request_id: string }).request_id, id);
    }
  });
});

describe('model and output format', () => {
  test('unknown model → 404 model_not_found; missing model_id → 400 invalid_request', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ model_id: 'sonic-9' })), 404, 'model_not_found');
    const { model_id: _, ...body } = ttsBody();
    await expectError(await server.post('/tts/bytes', body), 400, 'invalid_request');
  });
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['no output_format', { output_format: undefined }, /output_format is required/],
    ['gepard mp3', { output_format: { container: 'mp3', sample_rate: 44100 } }, /container must be one of raw, wav/],
    ['gepard pcm_f32le', { output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 } }, /encoding must be one of/],
    ['gepard without encoding', { output_format: { container: 'raw', sample_rate: 24000 } }, /encoding must be one of/],
    ['unlisted rate', { output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 11025 } }, /sample_rate must be one of/],
    ['rate as a string', { output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: '8000' } }, /sample_rate/],
    ['unknown container', { output_format: { container: 'ogg', encoding: 'pcm_s16le', sample_rate: 8000 } }, /container/],
    ['bit_rate with raw', { model_id: 'omnivoice', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000, bit_rate: 64000 } }, /bit_rate is only accepted with container mp3/],
    ['encoding with mp3', { model_id: 'omnivoice', output_format: { container: 'mp3', encoding: 'pcm_s16le', sample_rate: 44100 } }, /encoding is not accepted with container mp3/],
    ['unlisted mp3 bit rate', { model_id: 'omnivoice', output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 100000 } }, /bit_rate must be one of/],
    ['mp3 bit rate LAME cannot make at 8 kHz', { model_id: 'omnivoice', output_format: { container: 'mp3', sample_rate: 8000, bit_rate: 128000 } }, /8000 Hz .*64000/],
    ['mp3 320 kbps at 24 kHz', { model_id: 'omnivoice', output_format: { container: 'mp3', sample_rate: 24000, bit_rate: 320000 } }, /24000 Hz/],
  ];
  for (const [name, overrides, message] of refused) {
    test(`${name} → 400 invalid_output_format`, async () => {
      const body = await expectError(await server.post('/tts/bytes', ttsBody(overrides)), 400, 'invalid_output_format');
      assert.match(String(body.message), message);
    });
  }
  test('generation_config out of range → 400 invalid_generation_config', async () => {
    for (const generation_config of [{ speed: 2 }, { speed: 0.5 }, { volume: 3 }, { volume: 'loud' }, 'fast']) {
      await expectError(await server.post('/tts/bytes', ttsBody({ generation_config })), 400, 'invalid_generation_config');
    }
  });
  test('speed other than 1 on a stream → 400 invalid_generation_config', async () => {
    const body = await expectError(
      await server.post('/tts/bytes', ttsBody({ stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 }, generation_config: { speed: 1.2 } })),
      400,
      'invalid_generation_config',
    );
    assert.match(String(body.message), /when streaming/);
  });
  test('mp3 on a stream → 400 invalid_output_format; wav streams only where the profile allows', async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', stream: true, output_format: { container: 'mp3', sample_rate: 44100 } })), 400, 'invalid_output_format');
    await expectError(await server.post('/tts/bytes', ttsBody({ stream: true })), 400, 'invalid_output_format');
  });
  test('language is accepted', async () => {
    const response = await server.post('/tts/bytes', ttsBody({ language: 'en-US' }));
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  });
});
