/**
 * @module test/deepgram
 * The Deepgram dialect against a real server, over the wire as Deepgram's
 * clients send it: `POST /v1/speak` in every encoding and container of
 * Deepgram's table (audio decoded and measured), its headers, each
 * documented error in Deepgram's shape, and the books to the character.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { WebSocket as BrowserWebSocket } from 'undici';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import type { OutputFormat } from '../src/audio/format.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/poll.js';
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
  ...[8000, 16000, 22050, 32000, 48000].map((rate) => ({ query: `encoding=flac&sample_rate=${rate}`, type: 'audio/flac', format: { container: 'flac', sampleRate: rate } as OutputFormat, rate, magic: 'fLaC' })),
  { query: 'encoding=flac', type: 'audio/flac', format: { container: 'flac', sampleRate: 48000 }, rate: 48000, magic: 'fLaC' },
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

/** What a socket received, in order: JSON messages, and binary audio as `{audio}`; and how it closed. */
interface Received {
  ws: WebSocket;
  events: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `predicate` holds for some event (bounded). */
  until(predicate: (event: Record<string, any>) => boolean, ms?: number): Promise<Record<string, any>>;
  send(message: unknown): void;
}

function socket(query: string, headers: Record<string, string> = { authorization: `Token ${org.key}` }, protocols?: string[]): Promise<Received> {
  const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/v1/speak${query ? `?${query}` : ''}`, protocols, { headers });
  const events: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data, binary) => {
    events.push(binary ? { audio: Buffer.from(data as Buffer) } : JSON.parse(String(data)));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => (resolve({ code, reason: String(reason) }), waiters.splice(0).forEach((w) => w()))));
  const received: Received = {
    ws,
    events,
    closed,
    async until(predicate, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline || ws.readyState === WebSocket.CLOSED) throw new Error(`not received; got ${JSON.stringify(events.map((e) => e.type ?? e.audio.length))}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200).unref();
        });
      }
    },
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(received));
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode, headers: response.headers, body })));
    });
    ws.once('error', reject);
  });
}

const audioOf = (events: Record<string, any>[]) => Buffer.concat(events.filter((e) => e.audio).map((e) => e.audio));
const indexOf = (events: Record<string, any>[], predicate: (e: Record<string, any>) => boolean) => events.findIndex(predicate);

describe('wss /v1/speak', () => {
  test("Pipecat's flow: Metadata first, Speak per sentence, Flushed after its audio, twice, then Close with 1000; charged per character", { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const s = await socket('model=aura-2-thalia-en&encoding=linear16&sample_rate=16000');
    const sentences = ['Hello there, this is the first sentence.', ' And here is a second one, a little longer.'];
    await s.until((e) => e.type === 'Metadata');
    const metadata = s.events[0];
    assert.equal(metadata.type, 'Metadata');
    assert.match(metadata.request_id, UUID);
    assert.match(metadata.model_uuid, UUID);
    assert.equal(metadata.model_name, 'aura-2-thalia-en');
    assert.equal(typeof metadata.model_version, 'string');
    for (const text of sentences) s.send({ type: 'Speak', text });
    s.send({ type: 'Flush', sequence_id: 7 });
    const first = await s.until((e) => e.type === 'Flushed');
    assert.equal(typeof first.sequence_id, 'number');
    const cut = s.events.indexOf(first);
    const firstAudio = audioOf(s.events.slice(0, cut));
    assert.equal(firstAudio.length % 2, 0);
    const seconds = firstAudio.length / 2 / 16000;
    assert.ok(seconds > 2 && seconds < 9, `${seconds} s`);
    assert.ok(rms((await decodeToFloat(firstAudio, { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 })).samples) > 0.02);
    assert.notEqual(firstAudio.subarray(0, 4).toString('latin1'), 'RIFF');
    s.send({ type: 'Speak', text: 'Third.' });
    s.send({ type: 'Flush' });
    const second = await s.until((e) => e.type === 'Flushed' && e !== first);
    assert.notEqual(second.sequence_id, first.sequence_id);
    assert.ok(audioOf(s.events.slice(cut + 1, s.events.indexOf(second))).length > 8000, 'the second flush has its own audio before its Flushed');
    // A Flush with nothing pending is answered at once.
    s.send({ type: 'Flush' });
    await s.until((e) => e.type === 'Flushed' && e !== first && e !== second);
    s.send({ type: 'Close' });
    assert.deepEqual(await s.closed, { code: 1000, reason: '' });
    await charged(before, [...sentences, 'Third.'].join('').length);
  });

  test('Clear: Cleared, no audio after it, the sentence being spoken charged whole, the rest not at all', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const s = await socket('model=aura-2-thalia-en&encoding=mulaw&sample_rate=8000');
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'][i]} of a long answer that the caller interrupts.`);
    for (const text of sentences) s.send({ type: 'Speak', text });
    await s.until((e) => e.audio);
    s.send({ type: 'Clear' });
    const cleared = await s.until((e) => e.type === 'Cleared');
    assert.equal(typeof cleared.sequence_id, 'number');
    const at = s.events.indexOf(cleared);
    const heard = audioOf(s.events.slice(0, at)).length / 8000;
    // Then a new answer on the same socket.
    s.send({ type: 'Speak', text: 'Short.' });
    s.send({ type: 'Flush' });
    const flushed = await s.until((e) => e.type === 'Flushed');
    const after = audioOf(s.events.slice(at + 1, s.events.indexOf(flushed))).length / 8000;
    assert.ok(after > 0.2 && after < 2, `only the new answer's audio after Cleared: ${after} s`);
    s.send({ type: 'Close' });
    assert.equal((await s.closed).code, 1000);
    // Whole sentences were begun: the charge is a prefix of them, plus the new answer, and not all of them.
    const prefixes = sentences.map((_, i) => sentences.slice(0, i + 1).join('').length + 'Short.'.length);
    let spent = 0;
    await eventually(async () => {
      const { balance, sum } = await balanceOf(server, org.orgId);
      assert.equal(balance, sum);
      spent = before - balance;
      return prefixes.includes(spent);
    }, 10_000);
    assert.ok(prefixes.includes(spent), `charged ${spent}: whole sentences begun and the new answer (${prefixes.join(', ')})`);
    assert.ok(spent < prefixes.at(-1)!, `not every sentence was charged (${spent}, heard ${heard} s)`);
  });

  test('limits and close codes: 1009 BIG-0001 and BIG-0000, 1008 DATA-0000, 1003 MESSAGE-0000, a Warning past 20 flushes; what is refused is never charged', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const big = await socket('');
    big.send({ type: 'Speak', text: 'x'.repeat(2001) });
    assert.deepEqual(await big.closed, { code: 1009, reason: 'BIG-0001' });
    const huge = await socket('');
    huge.send({ type: 'Speak', text: 'x'.repeat(70_000) });
    assert.deepEqual(await huge.closed, { code: 1009, reason: 'BIG-0000' });
    for (const bad of ['{"type":"Bogus"}', 'not json', '[1]', 'null', '{"type":5}', '{"type":"Speak","text":42}', '{"type":"Speak"}', '{"text":"Hi."}']) {
      const s = await socket('');
      s.send(bad);
      assert.deepEqual(await s.closed, { code: 1008, reason: 'DATA-0000' }, bad);
    }
    // Unknown fields in a known message are ignored.
    const extra = await socket('');
    extra.send({ type: 'Speak', text: 'Hi.', sequence_id: 3, voice: 'x' });
    extra.send({ type: 'Close', reason: 'done' });
    assert.equal((await extra.closed).code, 1000);
    assert.ok(audioOf(extra.events).length > 4000);
    const binary = await socket('');
    binary.ws.send(Buffer.from([1, 2, 3]));
    assert.deepEqual(await binary.closed, { code: 1003, reason: 'MESSAGE-0000' });
    const flushes = await socket('');
    for (let i = 0; i < 21; i++) flushes.send({ type: 'Flush', unknown: 'ignored' });
    const warning = await flushes.until((e) => e.type === 'Warning');
    assert.equal(typeof warning.description, 'string');
    assert.equal(typeof warning.code, 'string');
    await flushes.until(() => flushes.events.filter((e) => e.type === 'Flushed').length === 21);
    assert.equal(flushes.ws.readyState, WebSocket.OPEN);
    flushes.send({ type: 'Close' });
    assert.equal((await flushes.closed).code, 1000);
    await charged(before, 'Hi.'.length);
  });

  test("the handshake: Deepgram's refusals with dg-error; subprotocol auth echoed, from a browser-style WebSocket too", { timeout: 60_000 }, async () => {
    for (const [query, headers, status] of [
      ['', { authorization: 'Token vg_wrong' }, 401],
      ['', {}, 401],
      ['encoding=mp3', { authorization: `Token ${org.key}` }, 400],
      ['model=aura-nope-en', { authorization: `Token ${org.key}` }, 400],
      ['encoding=mulaw&sample_rate=24000', { authorization: `Token ${org.key}` }, 400],
    ] as const) {
      const refused = (await socket(query, headers).then(
        () => assert.fail('upgraded'),
        (err) => err,
      )) as { status: number; headers: Record<string, string>; body: string };
      assert.equal(refused.status, status, query);
      const body = JSON.parse(refused.body);
      assert.equal(refused.headers['dg-error'], body.err_msg);
      assert.equal(refused.headers['dg-request-id'], body.request_id);
      assert.match(body.request_id, UUID);
    }
    const token = await socket('encoding=linear16&sample_rate=24000', {}, ['token', org.key]);
    assert.equal(token.ws.protocol, 'token');
    token.send({ type: 'Speak', text: 'Hello.' });
    token.send({ type: 'Close' });
    assert.equal((await token.closed).code, 1000);
    assert.ok(audioOf(token.events).length > 24000);
    // undici's WebSocket is a browser's: it fails unless the server echoes one of the offered subprotocols.
    const browser = new BrowserWebSocket(`${server.url.replace(/^http/, 'ws')}/v1/speak?encoding=linear16`, ['bearer', org.key, 'x-deepgram-session-id', '0b5bcf8e-0000-4000-8000-000000000000']);
    browser.binaryType = 'arraybuffer';
    const frames: unknown[] = [];
    const closed = new Promise<number>((resolve, reject) => {
      browser.onmessage = (event: { data: unknown }) => void frames.push(event.data);
      browser.onclose = (event: { code: number }) => resolve(event.code);
      browser.onerror = () => reject(new Error('browser-style socket failed'));
    });
    await new Promise((resolve) => (browser.onopen = resolve));
    assert.equal(browser.protocol, 'bearer');
    browser.send(JSON.stringify({ type: 'Speak', text: 'Hello.' }));
    browser.send(JSON.stringify({ type: 'Close' }));
    assert.equal(await closed, 1000);
    assert.equal(JSON.parse(frames[0] as string).type, 'Metadata');
    assert.ok(frames.some((f) => f instanceof ArrayBuffer && f.byteLength > 0));
  });
});

describe('GET /v1/models', () => {
  test("Deepgram's listing for Authorization: Token, ElevenLabs' for xi-api-key and Bearer", { timeout: 30_000 }, async () => {
    const list = (headers: Record<string, string>) => fetch(`${server.url}/v1/models`, { headers });
    const deepgram = await list({ authorization: `Token ${org.key}` });
    assert.equal(deepgram.status, 200);
    const body = (await deepgram.json()) as { stt: unknown[]; tts: Record<string, any>[] };
    assert.deepEqual(body.stt, []);
    const thalia = body.tts.find((m) => m.canonical_name === 'aura-2-thalia-en')!;
    assert.equal(thalia.name, 'thalia');
    assert.equal(thalia.architecture, 'aura-2');
    assert.deepEqual(thalia.languages, ['en']);
    assert.match(thalia.uuid, UUID);
    assert.ok(body.tts.some((m) => m.canonical_name === 'aura-asteria-en' && m.architecture === 'aura'));
    assert.ok(body.tts.some((m) => m.canonical_name === 'aura-2-oliver-en'));
    assert.ok(body.tts.some((m) => m.canonical_name === 'aura-2-espeak-fr-fr-fr'));
    // Every name listed is one /v1/speak takes.
    const response = await speak(`model=${body.tts.at(-1)!.canonical_name}&encoding=linear16&container=none`, { text: 'Hi.' });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    for (const headers of [{ 'xi-api-key': org.key }, { authorization: `Bearer ${org.key}` }] as Record<string, string>[]) {
      const elevenlabs = await list(headers);
      assert.equal(elevenlabs.status, 200);
      const models = (await elevenlabs.json()) as Record<string, unknown>[];
      assert.ok(Array.isArray(models) && models.some((m) => m.model_id === 'voicegate-1.0'), JSON.stringify(headers));
    }
    await deepgramError(await list({ authorization: 'Token vg_nope' }), 401, 'INVALID_AUTH', 'Invalid credentials.');
  });
});
