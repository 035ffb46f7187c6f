/**
 * @module test/deepgram
 * The Deepgram dialect against a real server, over the wire as Deepgram's
 * clients send it: `POST /v1/speak` in every encoding and container of
 * Deepgram's table (audio decoded and measured), its headers, each
 * documented error in Deepgram's shape, and the books to the character.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import type { OutputFormat } from '../src/audio/format.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } as any });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const TEXT = 'Hello there, this is a test of the voice. It speaks two sentences.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function speak(query: string, body: unknown = { text: TEXT }, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/v1/speak${query ? `?${query}` : ''}`, {
    method: 'POST',
    headers: { authorization: `Token ${org.key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Polls the ledger until it has settled on `expected` characters more than `before` (bounded). */
async function charged(before: number, expected: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { balance, sum } = await balanceOf(server, org.orgId);
    assert.equal(balance, sum);
    if (before - balance === expected) return;
    if (Date.now() > deadline) assert.equal(before - balance, expected, 'charged characters');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function deepgramError(response: Response, status: number, code: string, message: RegExp | string): Promise<void> {
  const body = (await response.json()) as Record<string, string>;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.err_code, code);
  if (typeof message === 'string') assert.equal(body.err_msg, message);
  else assert.match(body.err_msg, message);
  assert.match(body.request_id, UUID);
  assert.equal(response.headers.get('dg-request-id'), body.request_id);
  assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
}

/** Each combination of Deepgram's table: query, Content-Type, how to decode it, the rate heard. */
const COMBINATIONS: { query: string; type: string; format: OutputFormat; rate: number; magic?: string }[] = [
  ...[8000, 16000, 24000, 32000, 48000].flatMap((rate) => [
    { query: `encoding=linear16&container=wav&sample_rate=${rate}`, type: 'audio/wav', format: { container: 'wav', sampleRate: rate } as OutputFormat, rate, magic: 'RIFF' },
    { query: `encoding=linear16&container=none&sample_rate=${rate}`, type: `audio/l16;rate=${rate}`, format: { container: 'raw', encoding: 'pcm_s16le', sampleRate: rate } as OutputFormat, rate },
  ]),
  { query: 'encoding=linear16', type: 'audio/wav', format: { container: 'wav', sampleRate: 24000 }, rate: 24000, magic: 'RIFF' },
  ...(['mulaw', 'alaw'] as const).flatMap((encoding) =>
    [8000, 16000].flatMap((rate) => [
      { query: `encoding=${encoding}&sample_rate=${rate}`, type: 'audio/wav', format: { container: 'wav', sampleRate: rate } as OutputFormat, rate, magic: 'RIFF' },
      { query: `encoding=${encoding}&container=none&sample_rate=${rate}`, type: `audio/${encoding};rate=${rate}`, format: { container: 'raw', encoding: `pcm_${encoding}`, sampleRate: rate } as OutputFormat, rate },
    ]),
  ),
  { query: 'encoding=mulaw&container=none', type: 'audio/mulaw;rate=8000', format: { container: 'raw', encoding: 'pcm_mulaw', sampleRate: 8000 }, rate: 8000 },
  { query: '', type: 'audio/mpeg', format: { container: 'mp3', sampleRate: 22050 }, rate: 22050 },
  { query: 'encoding=mp3&bit_rate=32000', type: 'audio/mpeg', format: { container: 'mp3', sampleRate: 22050 }, rate: 22050 },
  { query: 'encoding=mp3&sample_rate=22050&bit_rate=48000', type: 'audio/mpeg', format: { container: 'mp3', sampleRate: 22050 }, rate: 22050 },
  { query: 'encoding=opus', type: 'audio/ogg;codecs=opus', format: { container: 'opus', sampleRate: 48000 }, rate: 48000, magic: 'OggS' },
  { query: 'encoding=opus&container=ogg&bit_rate=32000', type: 'audio/ogg;codecs=opus', format: { container: 'opus', sampleRate: 48000 }, rate: 48000, magic: 'OggS' },
];

describe('POST /v1/speak', () => {
  test('every encoding and container of the table: typed as Deepgram types it, audible, as long as the text', { timeout: 120_000 }, async () => {
    const lengths: number[] = [];
    for (const combination of COMBINATIONS) {
      const response = await speak(combination.query);
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200, `${combination.query}: ${bytes.toString().slice(0, 200)}`);
      assert.equal(response.headers.get('content-type'), combination.type, combination.query);
      if (combination.magic) assert.equal(bytes.subarray(0, 4).toString('latin1'), combination.magic, combination.query);
      else assert.notEqual(bytes.subarray(0, 4).toString('latin1'), 'RIFF', combination.query);
      const audio = await decodeToFloat(bytes, combination.format);
      assert.equal(audio.sampleRate, combination.rate, combination.query);
      const seconds = audio.samples.length / audio.sampleRate;
      assert.ok(seconds > 2 && seconds < 8, `${combination.query}: ${seconds} s`);
      assert.ok(rms(audio.samples) > 0.02, `${combination.query} is audible`);
      lengths.push(seconds);
    }
    assert.ok(Math.max(...lengths) - Math.min(...lengths) < 0.3, `every format says the same: ${lengths.join(', ')}`);
  });

  test("Deepgram's headers beside Voicegate's, the body streamed, one credit per character", { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const response = await speak('model=aura-2-thalia-en&encoding=linear16&container=none&sample_rate=16000');
    assert.equal(response.status, 200);
    const h = response.headers;
    assert.match(h.get('dg-request-id') ?? '', UUID);
    assert.equal(h.get('x-dg-request-id'), h.get('dg-request-id'));
    assert.equal(h.get('dg-model-name'), 'aura-2-thalia-en');
    assert.equal(h.get('x-dg-model-name'), 'aura-2-thalia-en');
    assert.match(h.get('dg-model-uuid') ?? '', UUID);
    assert.equal(h.get('dg-char-count'), String(TEXT.length));
    assert.equal(h.get('x-dg-characters'), String(TEXT.length));
    assert.match(h.get('x-request-id') ?? '', /^req_/);
    assert.equal(h.get('transfer-encoding'), 'chunked');
    assert.equal(h.get('content-length'), null);
    assert.equal(h.get('x-request-credits'), String(TEXT.length));
    assert.ok(h.get('x-credits-remaining') !== null);
    assert.ok((await response.arrayBuffer()).byteLength > 32000);
    await charged(before, TEXT.length);
  });

  test('no model is aura-asteria-en; the scheme in any case; Bearer; text/plain; every voice as aura-2-<voice>-<lang>', { timeout: 60_000 }, async () => {
    const plain = await speak('encoding=linear16&container=none', { text: 'Hi.' }, { authorization: `token ${org.key}` });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('dg-model-name'), 'aura-asteria-en');
    await plain.arrayBuffer();
    const bearer = await speak('encoding=linear16&container=none', { text: 'Hi.' }, { authorization: `Bearer ${org.key}` });
    assert.equal(bearer.status, 200);
    await bearer.arrayBuffer();
    const text = await speak('encoding=linear16&container=none', 'Hello.', { 'content-type': 'text/plain' });
    assert.equal(text.status, 200);
    assert.equal(text.headers.get('dg-char-count'), '6');
    await text.arrayBuffer();
    for (const model of ['aura-2-oliver-en', 'aura-2-espeak-fr-fr-fr', 'aura-2-espeak-fr-fr-fr-fr', 'aura-luna-en', 'aura-2-celeste-es', 'aura-2-hector-fr']) {
      const response = await speak(`model=${model}&encoding=linear16&container=none`, { text: 'Bonjour.' });
      assert.equal(response.status, 200, `${model}: ${await response.clone().text()}`);
      assert.ok(rms((await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 })).samples) > 0.02, model);
    }
  });

  test("each error in Deepgram's shape and status, never charged", { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const format = (query: string, message: string) => async () => deepgramError(await speak(query), 400, 'INVALID_QUERY_PARAMETER', `Unsupported audio format: ${message}`);
    await format('encoding=linear16&container=ogg', '`container=ogg` is invalid when `encoding=linear16`')();
    await format('encoding=mp3&container=wav', '`container` is not applicable when `encoding=mp3`')();
    await format('encoding=linear16&bit_rate=32000', '`bit_rate` is not applicable when `encoding=linear16`')();
    await format('encoding=mulaw&sample_rate=24000', '`sample_rate` must be 8000, 16000 when `encoding=mulaw`')();
    await format('encoding=mp3&bit_rate=64000', '`bit_rate` must be 32000, 48000 when `encoding=mp3`')();
    await format('encoding=mp3&sample_rate=44100', '`sample_rate` is not applicable when `encoding=mp3`')();
    await deepgramError(await speak('encoding=aac'), 400, 'INVALID_QUERY_PARAMETER', /^Unsupported audio format: `encoding=aac` is not available/);
    await deepgramError(await speak('encoding=wma'), 400, 'INVALID_QUERY_PARAMETER', /^Failed to deserialize query parameters: encoding/);
    await deepgramError(await speak('sample_rate=abc&encoding=linear16'), 400, 'INVALID_QUERY_PARAMETER', /^Failed to deserialize query parameters: sample_rate/);
    await deepgramError(await speak('speed=fast'), 400, 'INVALID_QUERY_PARAMETER', /^Failed to deserialize query parameters: speed/);
    for (const model of ['aura-nope-en', 'aura-2-nobody-en', 'aura-2-sarah-fr', 'whisper', 'aura-2-']) {
      await deepgramError(await speak(`model=${model}`), 400, 'Bad Request', 'Bad Request: No such model/version combination found.');
    }
    await deepgramError(await speak('', { text: '' }), 400, 'Bad Request', 'Input text contains no characters.');
    await deepgramError(await speak('', { text: '   ' }), 400, 'Bad Request', 'Input text contains no characters.');
    await deepgramError(await speak('', {}), 400, 'PAYLOAD_ERROR', /exactly one of `text` or `url`/);
    await deepgramError(await speak('', { text: 42 }), 400, 'PAYLOAD_ERROR', /exactly one of `text` or `url`/);
    await deepgramError(await speak('', 'not json'), 400, 'PAYLOAD_ERROR', /JSON/);
    await deepgramError(await speak('', '<speak/>', { 'content-type': 'application/xml' }), 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/json/);
    await deepgramError(await speak('', { text: 'x'.repeat(10_001) }), 413, 'Payload Too Large', 'Input text exceeds maximum character limit of 10000.');
    await deepgramError(await speak('', undefined, { authorization: '' }), 401, 'INVALID_AUTH', 'Invalid credentials.');
    await deepgramError(await speak('', undefined, { authorization: 'Token vg_nope' }), 401, 'INVALID_AUTH', 'Invalid credentials.');
    await deepgramError(await speak('speed=9'), 400, 'INVALID_QUERY_PARAMETER', /speed/);
    await charged(before, 0);
  });
});
