/**
 * @module test/tts-normalize
 * The English normaliser on a real server: on by default for eSpeak, off
 * where an engine's `normalize` is false; word timestamps still name the
 * client's words ("$5.50,", "555-0199"); `say-as` is read whatever the
 * setting; and a WebSocket that receives a number in pieces speaks it whole
 * (the tone engine's audio is exactly as long as the text it was given, so
 * its length tells which text that was).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
before(async () => {
  server = await startServer({
    config: {
      engines: { 'espeak-as-written': { type: 'espeak', workers: 1, normalize: false }, 'tone-normalized': { type: 'tone', normalize: true } },
      models: { 'gepard-as-written': { extends: 'gepard-1.0', engine: 'espeak-as-written' }, 'tone-normalized': { extends: 'gepard-1.0', engine: 'tone-normalized' } },
    },
  });
});
after(() => server.close());

const raw = (rate: number) => ({ container: 'raw', encoding: 'pcm_s16le', sample_rate: rate });

async function samples(model: string, transcript: string): Promise<number> {
  const response = await server.post('/tts/bytes', { model_id: model, transcript, voice: 'sarah', output_format: raw(22050) });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.arrayBuffer()).byteLength / 2;
}

async function sseWords(model: string, transcript: string): Promise<string[]> {
  const response = await server.post('/tts/sse', { model_id: model, transcript, voice: 'sarah', output_format: raw(22050), add_timestamps: true });
  assert.equal(response.status, 200);
  const events = (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
  return events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
}

describe('normalisation as an engine setting', () => {
  test('eSpeak normalises by default; normalize: false speaks the text as written', { timeout: 30_000 }, async () => {
    const text = 'Pay $1,234.56 by 2026-12-03.';
    const spoken = 'Pay one thousand two hundred thirty-four dollars and fifty-six cents by December third, twenty twenty-six.';
    // The default engine says what the normaliser writes out (eSpeak may place a phrase break
    // differently from run to run: a few milliseconds); the other one says something else.
    const close = (a: number, b: number) => Math.abs(a - b) / b < 0.01;
    const [normalized, writtenOut] = [await samples('gepard-1.0', text), await samples('gepard-1.0', spoken)];
    assert.ok(close(normalized, writtenOut), `${normalized} vs ${writtenOut}`);
    const [asWritten, writtenOutThere] = [await samples('gepard-as-written', text), await samples('gepard-as-written', spoken)];
    assert.ok(!close(asWritten, writtenOutThere), `${asWritten} vs ${writtenOutThere}`);
    // say-as is read as asked whatever the setting.
    const sayAs = '<speak><say-as interpret-as="cardinal">1234</say-as></speak>';
    const [read, words] = [await samples('gepard-as-written', sayAs), await samples('gepard-as-written', 'one thousand two hundred thirty-four')];
    assert.ok(close(read, words), `${read} vs ${words}`);
  });

  test("word timestamps name the client's words, not the words they were read as", { timeout: 30_000 }, async () => {
    const text = 'It costs $5.50, call 555-0199 at 2 PM on Dec 3 with Dr. Smith.';
    assert.deepEqual(await sseWords('gepard-1.0', text), text.split(' '));
  });
});

describe('WebSocket: a number arriving in pieces is read whole', () => {
  test('pieces give the same audio as the whole message', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url);
    const ctx = { model_id: 'tone-normalized', voice: 'sarah', output_format: raw(22050), max_buffer_delay_ms: 0, add_timestamps: true };
    socket.send({ ...ctx, context_id: 'whole', transcript: 'It costs $1,200 or 3.14 each. ' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'whole');
    for (const piece of ['It costs $1,', '200 or 3.', '14 each. ']) socket.send({ ...ctx, context_id: 'pieces', transcript: piece, continue: true });
    socket.send({ ...ctx, context_id: 'pieces', transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'pieces');
    assert.equal(socket.audio('pieces').length, socket.audio('whole').length);
    const words = socket.of('pieces', 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['It', 'costs', '$1,200', 'or', '3.14', 'each.']);
    socket.close();
  });
});
