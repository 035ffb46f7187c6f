/**
 * @module test/text-normalisation
 * Every language's readings on a real server: each row of the per-language
 * tables (`locale-fixtures.ts`) is what `POST /tts/normalize` answers and
 * what ElevenLabs' `normalized_alignment` spells, while `alignment` and
 * word timestamps keep the words sent. `/tts/normalize` itself: spans in
 * code points, the language decided as for speech (the request's, else the
 * voice's), SSML read, scoped like `/tts/bytes` (an access token with the
 * `tts` grant will do) and never charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LOCALE_FIXTURES } from '../src/synthesis/normalize/locale-fixtures.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
before(async () => {
  server = await startServer({
    config: { engines: { 'tone-normalized': { type: 'tone', normalize: true } }, models: { 'tone-normalized': { extends: 'gepard-1.0', engine: 'tone-normalized' } } },
  });
});
after(() => server.close());

interface Normalized {
  text: string;
  language: string;
  spans: { text_from: number; text_to: number; source_from: number; source_to: number }[];
}

async function normalize(body: Record<string, unknown>, headers?: Record<string, string>): Promise<Normalized> {
  const response = await server.post('/tts/normalize', body, headers);
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  return json as Normalized;
}

describe('POST /tts/normalize', () => {
  test('answers the text the engine is given, its language and where each part came from, in code points', { timeout: 20_000 }, async () => {
    const transcript = '😀 Ich habe 21 Äpfel für 3,50 €.';
    const answer = await normalize({ transcript, language: 'de-DE', voice: 'espeak-de' });
    assert.equal(answer.text, 'Ich habe einundzwanzig Äpfel für drei Euro fünfzig.'.replace(/^/u, '😀 '));
    assert.equal(answer.language, 'de-de');
    const points = (text: string) => Array.from(text);
    const spoken = (span: Normalized['spans'][number]) => points(answer.text).slice(span.text_from, span.text_to).join('');
    const source = (span: Normalized['spans'][number]) => points(transcript).slice(span.source_from, span.source_to).join('');
    const of = (words: string) => answer.spans.find((span) => spoken(span) === words);
    assert.equal(source(of('einundzwanzig')!), '21');
    assert.deepEqual(of('einundzwanzig'), { text_from: 11, text_to: 24, source_from: 11, source_to: 13 });
    assert.equal(source(of('drei Euro fünfzig')!), '3,50 €');
    // The spans cover the text, in order.
    assert.equal(answer.spans.map(spoken).join(''), answer.text);
  });

  test('the language is the request’s, else the voice’s; SSML is read; a language without rules keeps its digits', { timeout: 20_000 }, async () => {
    assert.deepEqual(await normalize({ transcript: 'Es sind 21 Grad.', voice: 'espeak-de' }).then((a) => [a.text, a.language]), ['Es sind einundzwanzig Grad.', 'de']);
    assert.deepEqual(await normalize({ transcript: 'It is 21 degrees.', voice: 'sarah' }).then((a) => [a.text, a.language]), ['It is twenty-one degrees.', 'en']);
    assert.deepEqual(await normalize({ transcript: 'Il y a 21 chats.', voice: 'sarah', language: 'fr' }).then((a) => [a.text, a.language]), ['Il y a vingt et un chats.', 'fr']);
    assert.equal((await normalize({ transcript: '<speak>I saw 2 <lang xml:lang="fr-FR">2 chats</lang></speak>' })).text, 'I saw two deux chats');
    assert.equal((await normalize({ transcript: '<speak>I saw 2</speak>', transcript_type: 'ssml' })).text, 'I saw two');
    assert.deepEqual(await normalize({ transcript: 'Minulla on 21 omenaa.', language: 'fi' }).then((a) => [a.text, a.language]), ['Minulla on 21 omenaa.', 'fi']);
    // The OpenAI dialect takes the same language as an extension.
    const speech = await server.post('/v1/audio/speech', { model: 'tone-normalized', input: 'Es sind 21 Grad.', voice: 'sarah', language: 'de', response_format: 'pcm' });
    assert.equal(speech.status, 200);
  });

  test('bad input is a 400; an unknown voice or model a 404', { timeout: 20_000 }, async () => {
    const status = async (body: unknown) => (await server.post('/tts/normalize', body)).status;
    assert.equal(await status({}), 400);
    assert.equal(await status({ transcript: 5 }), 400);
    assert.equal(await status({ transcript: 'x', language: 'not a language!' }), 400);
    assert.equal(await status({ transcript: 'x', transcript_type: 'html' }), 400);
    assert.equal(await status({ transcript: 'x', voice: 'no-such-voice' }), 404);
    assert.equal(await status({ transcript: 'x', model_id: 'no-such-model' }), 404);
    assert.equal(await status({ transcript: 'x'.repeat(20_000) }), 400);
    assert.equal((await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript: 'x', voice: 'sarah', language: '!!', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } })).status, 400);
  });

  test('every row of every language’s table, as /tts/normalize answers it', { timeout: 60_000 }, async () => {
    const wrong: string[] = [];
    for (const [language, rows] of Object.entries(LOCALE_FIXTURES)) {
      for (const [input, expected] of rows) {
        const { text } = await normalize({ transcript: input, language, model_id: 'tone-normalized' });
        if (text !== expected) wrong.push(`${language}: ${input} → ${text} (expected ${expected})`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});

describe('what was spoken is visible in ElevenLabs’ normalized_alignment', () => {
  async function withTimestamps(text: string, language: string) {
    const response = await server.post('/v1/text-to-speech/sarah/with-timestamps?output_format=pcm_16000', { text, model_id: 'tone-normalized', language_code: language });
    const json = (await response.json()) as Record<string, { characters: string[]; character_start_times_seconds: number[] }>;
    assert.equal(response.status, 200, JSON.stringify(json));
    return json;
  }
  const squeeze = (text: string) => text.replace(/\s+/gu, '');

  test('every row: normalized_alignment spells the normalised text, alignment the text sent', { timeout: 120_000 }, async () => {
    const wrong: string[] = [];
    for (const [language, rows] of Object.entries(LOCALE_FIXTURES)) {
      for (const [input, expected] of rows) {
        const json = await withTimestamps(input, language);
        const normalized = json.normalized_alignment.characters.join('');
        if (squeeze(normalized) !== squeeze(expected)) wrong.push(`${language}: ${input} → ${normalized}`);
        if (json.alignment.characters.join('') !== input.split(/\s+/u).join(' ')) wrong.push(`${language}: alignment ${json.alignment.characters.join('')}`);
        const starts = json.normalized_alignment.character_start_times_seconds;
        if (starts.some((t, i) => i > 0 && t < starts[i - 1])) wrong.push(`${language}: ${input}: times go backwards`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('an audio cache hit spells what its miss spoke', { timeout: 20_000 }, async () => {
    const body = { text: 'Ich zahle am 4. Mai 3,50 € für 21 Äpfel.', model_id: 'tone-normalized', language_code: 'de' };
    const answers = [];
    for (let i = 0; i < 2; i++) {
      const response = await server.post('/v1/text-to-speech/sarah/with-timestamps?output_format=pcm_16000', body);
      assert.equal(response.status, 200);
      answers.push({ cache: response.headers.get('x-cache'), json: (await response.json()) as Record<string, { characters: string[] }> });
    }
    assert.equal(answers[1].cache, 'hit');
    assert.equal(answers[1].json.normalized_alignment.characters.join(''), 'Ich zahle am vierten Mai drei Euro fünfzig für einundzwanzig Äpfel.');
    assert.deepEqual(answers[1].json.normalized_alignment, answers[0].json.normalized_alignment);
  });

  test('word timestamps name the words sent, in every language', { timeout: 20_000 }, async () => {
    for (const [language, text] of [['de', 'Ich habe 21 Äpfel für 3,50 € am 4. Mai gekauft.'], ['fr', 'Le 1er mai à 14h30, 25 % de 1 000 €.'], ['pt-BR', 'Custa R$ 3,50 e 5 km.']]) {
      const response = await server.post('/tts/sse', { model_id: 'tone-normalized', transcript: text, voice: 'sarah', language, add_timestamps: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } });
      assert.equal(response.status, 200);
      const events = (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
      const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
      assert.deepEqual(words, text.split(' '), language);
    }
  });

  for (const sync of [false, true]) test(`the WebSocket sends normalizedAlignment of what was spoken (sync_alignment=${sync})`, { timeout: 20_000 }, async () => {
    const { WebSocket } = await import('ws');
    const socket = new WebSocket(`${server.url.replace(/^http/u, 'ws')}/v1/text-to-speech/sarah/stream-input?model_id=tone-normalized&language_code=de&output_format=pcm_16000&sync_alignment=${sync}`);
    const messages: Record<string, unknown>[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('message', (data) => {
        const message = JSON.parse(String(data));
        messages.push(message);
        if (message.isFinal) resolve();
      });
      socket.on('open', () => {
        socket.send(JSON.stringify({ text: ' ' }));
        socket.send(JSON.stringify({ text: 'Es kostet 3,50 €. ', flush: true }));
        socket.send(JSON.stringify({ text: '' }));
      });
    });
    socket.close();
    const chars = (key: string) => messages.flatMap((m) => ((m[key] as { chars: string[] } | null)?.chars ?? [])).join('');
    assert.equal(chars('alignment'), 'Es kostet 3,50 €.');
    assert.equal(squeeze(chars('normalizedAlignment')), squeeze('Es kostet drei Euro fünfzig.'));
    // In sync, no alignment comes without audio.
    if (sync) for (const m of messages) if (m.alignment) assert.ok(m.audio, 'an alignment rides on audio');
  });
});

describe('the WebSocket, text arriving in pieces', () => {
  // Buffered to clause boundaries (no max_buffer_delay_ms: 0, which speaks what has arrived at once).
  test('German in pieces is read as the whole message is: an ordinal and its month, a sum, an abbreviation', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url);
    const ctx = { model_id: 'tone-normalized', voice: 'sarah', language: 'de', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, add_timestamps: true };
    socket.send({ ...ctx, context_id: 'whole', transcript: 'Am 4. Mai kostet es z. B. 3,50 €. ' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'whole');
    for (const piece of ['Am 4. ', 'Mai kostet es z. ', 'B. 3,', '50 €. ']) socket.send({ ...ctx, context_id: 'pieces', transcript: piece, continue: true });
    socket.send({ ...ctx, context_id: 'pieces', transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'pieces');
    assert.equal(socket.audio('pieces').length, socket.audio('whole').length);
    const words = socket.of('pieces', 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['Am', '4.', 'Mai', 'kostet', 'es', 'z.', 'B.', '3,50', '€.']);
    socket.close();
  });
});

describe('a dialogue reads each turn in its own language', () => {
  test('each turn’s voice’s language, or the turn’s own language, decides (ElevenLabs’ normalized_alignment; the tone engine’s audio is as long as its text)', { timeout: 30_000 }, async () => {
    const response = await server.post('/v1/text-to-dialogue/with-timestamps?output_format=pcm_16000', {
      model_id: 'tone-normalized',
      inputs: [{ text: 'Ich habe 21 Äpfel.', voice_id: 'espeak-de' }, { text: 'I have 21 apples.', voice_id: 'sarah' }],
    });
    const json = (await response.json()) as { normalized_alignment: { characters: string[] } };
    assert.equal(response.status, 200, JSON.stringify(json));
    assert.equal(json.normalized_alignment.characters.join(''), 'Ich habe einundzwanzig Äpfel. I have twenty-one apples.');
    // A Cartesia dialogue turn's own language: the audio is that of the words written out in it.
    const bytes = async (inputs: unknown[]) => {
      const answer = await server.post('/tts/dialogue', { model_id: 'tone-normalized', inputs, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } });
      assert.equal(answer.status, 200, await answer.clone().text());
      return (await answer.arrayBuffer()).byteLength;
    };
    const asked = await bytes([{ transcript: 'Il y a 21 chats.', voice: 'sarah', language: 'fr' }, { transcript: 'I have 21 cats.', voice: 'sarah' }]);
    const written = await bytes([{ transcript: 'Il y a vingt et un chats.', voice: 'sarah' }, { transcript: 'I have twenty-one cats.', voice: 'sarah' }]);
    assert.equal(asked, written);
  });
});

describe('scoped like /tts/bytes, never charged', () => {
  let accounts: TestServer;
  let org: TestOrg;
  before(async () => {
    accounts = await startServer({ config: { accounts: { enabled: true, tokenSecret: 'a-test-secret-that-is-long-enough-1234567890', adminToken: 'admin-token-0123456789' } } });
    org = await newOrg(accounts, { credits: 1000 });
  });
  after(() => accounts.close());

  test('a key or a tts access token may call it; nothing is charged; no credential is a 401', { timeout: 20_000 }, async () => {
    const before = await balanceOf(accounts, org.orgId);
    const body = { transcript: 'Ich habe 21 Äpfel.', language: 'de' };
    const byKey = await accounts.post('/tts/normalize', body, org.auth);
    assert.equal(byKey.status, 200);
    assert.equal(((await byKey.json()) as Normalized).text, 'Ich habe einundzwanzig Äpfel.');
    const token = ((await (await accounts.post('/access-token', { grants: { tts: true }, expires_in: 60 }, org.auth)).json()) as { token: string }).token;
    assert.equal((await accounts.post('/tts/normalize', body, { authorization: `Bearer ${token}` })).status, 200);
    assert.equal((await accounts.post('/tts/normalize', body)).status, 401);
    assert.deepEqual(await balanceOf(accounts, org.orgId), before);
  });
});
