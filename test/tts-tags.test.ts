/**
 * @module test/tts-tags
 * Inline tags through every endpoint, decoded and measured: a `<break>`
 * adds its length of real silence (1 s ± 20 ms), resampled or not, and is
 * billed as one character; `<spell>` is spoken letter by letter (word
 * timestamps name the spelled word as sent); `<speed>` changes whole clips and not
 * streams; `<volume>` scales the level; a tag that cannot be read is 400
 * `invalid_tag` (an error event on the WebSocket); other markup is text; a
 * tag split across WebSocket messages is put back together.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { levelDbfs } from '../src/voices/loudness.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { longestZeroRun } from './helpers/audio.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'tone-tags': { extends: 'gepard-1.0', engine: 'tone' } } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const raw = (rate: number) => ({ container: 'raw', encoding: 'pcm_s16le', sample_rate: rate });

async function clip(transcript: string, options: { model?: string; rate?: number; extra?: Record<string, unknown> } = {}): Promise<{ samples: Int16Array; response: Response }> {
  const response = await server.post(
    '/tts/bytes',
    { model_id: options.model ?? 'gepard-1.0', transcript, voice: { mode: 'id', id: 'sarah' }, output_format: raw(options.rate ?? 22050), ...options.extra },
    org.auth,
  );
  assert.equal(response.status, 200, await response.clone().text());
  const bytes = Buffer.from(await response.arrayBuffer());
  return { samples: new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2), response };
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error_code: string }).error_code;
}

describe('<break>', () => {
  for (const [model, rate] of [['gepard-1.0', 22050], ['gepard-1.0', 16000], ['gepard-1.0', 48000], ['tone-tags', 8000]] as const) {
    test(`${model} at ${rate} Hz: a 1 s break adds 1 s ± 20 ms of silence`, { timeout: 20_000 }, async () => {
      const before = (await clip('Hello there.', { model, rate })).samples.length;
      const afterwards = (await clip('Goodbye now.', { model, rate })).samples.length;
      const { samples } = await clip('Hello there.<break time="1s"/>Goodbye now.', { model, rate });
      const added = (samples.length - before - afterwards) / rate;
      assert.ok(Math.abs(added - 1) <= 0.02, `added ${added.toFixed(4)} s`);
      assert.ok(longestZeroRun(samples) >= 0.98 * rate, `longest silence ${longestZeroRun(samples) / rate} s`);
    });
  }

  test('500ms and "0.5s" are the same half second; a break is billed as one character', { timeout: 20_000 }, async () => {
    const base = (await clip('One. Two.')).samples.length;
    for (const tag of ['<break time="500ms"/>', '<break time="0.5s" />']) {
      const { samples, response } = await clip(`One.${tag}Two.`);
      // The two halves are spoken separately, so eSpeak's own pause at the cut is added too: compare with
      // the same cut made by a zero-length break.
      const cut = (await clip('One.<break time="0s"/>Two.')).samples.length;
      assert.ok(Math.abs((samples.length - cut) / 22050 - 0.5) <= 0.02, `${tag}: ${(samples.length - cut) / 22050} s`);
      assert.ok(samples.length > base);
      assert.equal(response.headers.get('x-request-credits'), String('One.'.length + 1 + 'Two.'.length));
    }
  });

  test('a transcript that is only a break is that much silence', { timeout: 20_000 }, async () => {
    const { samples } = await clip('<break time="1s"/>');
    assert.equal(samples.length, 22050);
    assert.equal(longestZeroRun(samples), 22050);
  });

  test('on SSE, the OpenAI endpoint and the WebSocket too', { timeout: 30_000 }, async () => {
    const sse = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript: 'A.<break time="1s"/>B.', voice: 'sarah', output_format: raw(22050) }, org.auth);
    const events = (await sse.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
    const streamed = Buffer.concat(events.filter((e) => e.type === 'chunk').map((e) => Buffer.from(e.data, 'base64')));
    assert.ok(longestZeroRun(new Int16Array(streamed.buffer, streamed.byteOffset, streamed.length / 2)) >= 0.98 * 22050);

    const openai = await server.post('/v1/audio/speech', { model: 'tts-1', input: 'A.<break time="1s"/>B.', voice: 'nova', response_format: 'pcm' }, org.auth);
    const pcm = Buffer.from(await openai.arrayBuffer());
    assert.ok(longestZeroRun(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2)) >= 0.98 * 24000);

    // A tag split across messages, as token streams send it, is put back together and never spoken as text.
    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(22050), context_id: 'split', add_timestamps: true, max_buffer_delay_ms: 0 };
    for (const piece of ['Before the pause', ' <bre', 'ak time="1', 's"/>', ' after it.']) socket.send({ ...ctx, transcript: piece, continue: true });
    socket.send({ ...ctx, transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'split');
    const audio = socket.audio('split');
    assert.ok(longestZeroRun(new Int16Array(audio.buffer, audio.byteOffset, audio.length / 2)) >= 0.98 * 22050);
    const words = socket.of('split', 'timestamps').flatMap((e) => e.word_timestamps.words).join(' ');
    assert.doesNotMatch(words, /brea|time|<|>/);
    socket.close();
  });
});

describe('<spell>, <speed>, <volume>, <emotion>', () => {
  test('<spell> speaks the letters one by one; the timestamps name the word as sent', { timeout: 20_000 }, async () => {
    const response = await server.post(
      '/tts/sse',
      { model_id: 'gepard-1.0', transcript: 'Your code is <spell>XQ7</spell>.', voice: 'sarah', output_format: raw(22050), add_timestamps: true },
      org.auth,
    );
    const events = (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
    const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['Your', 'code', 'is', 'XQ7.']);
  });

  test('<speed> shortens a whole clip; on a stream it has no effect', { timeout: 20_000 }, async () => {
    const text = 'This sentence is spoken at two different speeds for the comparison.';
    const normal = (await clip(text)).samples.length;
    const fast = (await clip(`<speed ratio="1.5"/>${text}`)).samples.length;
    assert.ok(fast / normal < 0.8 && fast / normal > 0.5, `ratio ${fast / normal}`);
    const streamed = async (transcript: string) => {
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(22050), stream: true }, org.auth);
      assert.equal(response.status, 200);
      return (await response.arrayBuffer()).byteLength;
    };
    assert.equal(await streamed(`<speed ratio="1.5"/>${text}`), await streamed(text));
  });

  test('<volume ratio="0.5"/> is 6 dB quieter; <emotion> changes nothing audible', { timeout: 20_000 }, async () => {
    const text = 'The same words at two different levels, measured for the test.';
    const level = (samples: Int16Array) => levelDbfs(Float32Array.from(samples, (s) => s / 32767));
    const plain = level((await clip(text)).samples);
    const soft = level((await clip(`<volume ratio="0.5"/>${text}`)).samples);
    assert.ok(Math.abs(soft - plain + 6.02) < 0.5, `${plain.toFixed(2)} → ${soft.toFixed(2)} dB`);
    const calm = await clip(`<emotion value="calm"/>${text}`);
    assert.ok(Math.abs(level(calm.samples) - plain) < 0.5);
  });
});

describe('malformed tags', () => {
  test('a tag that cannot be read is 400 invalid_tag before anything is made or billed; other markup is text', { timeout: 20_000 }, async () => {
    for (const transcript of ['Wait <break time="forever"/> here.', '<speed ratio="5"/>Fast.', 'Hi <volume/> there.', '<break time="30s"/>']) {
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(22050) }, org.auth);
      assert.equal(response.status, 400, transcript);
      const body = (await response.json()) as Record<string, string>;
      assert.equal(body.error_code, 'invalid_tag');
      assert.match(body.message, /<(break|speed|volume)/);
    }
    const sse = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript: '<break time="x"/>', voice: 'sarah', output_format: raw(22050) }, org.auth);
    assert.equal(sse.status, 400);
    assert.equal(await errorCode(sse), 'invalid_tag');
    for (const transcript of ['Is 3 < 4 and 5 > 2?', 'Some <b>bold</b> words.']) await clip(transcript);
  });

  test('on the WebSocket the context ends with an invalid_tag error event and the socket goes on', { timeout: 20_000 }, async () => {
    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(22050) };
    socket.send({ ...ctx, context_id: 'bad-tag', transcript: 'Hello <speed ratio="fast"/> there.' });
    const error = await socket.waitFor((e) => e.context_id === 'bad-tag' && e.type === 'error');
    assert.equal(error.error_code, 'invalid_tag');
    assert.equal(error.status_code, 400);
    socket.send({ ...ctx, context_id: 'streamed-bad', transcript: 'Fine so far. ', continue: true });
    socket.send({ ...ctx, context_id: 'streamed-bad', transcript: 'Then <break time="soon"/>. ', continue: true });
    assert.equal((await socket.waitFor((e) => e.context_id === 'streamed-bad' && e.type === 'error')).error_code, 'invalid_tag');
    socket.send({ ...ctx, context_id: 'fine', transcript: 'Still here.' });
    await socket.waitFor((e) => e.context_id === 'fine' && e.type === 'done');
    socket.close();
  });
});
