/**
 * @module test/elevenlabs
 * An unchanged ElevenLabs integration against a real server: the official
 * `@elevenlabs/elevenlabs-js` SDK with `baseUrl` pointed here (convert,
 * stream, both with-timestamps calls, voices, models, subscription, and its
 * error classes), and raw `ws` clients that send exactly what Pipecat's and
 * LiveKit's ElevenLabs services send on `multi-stream-input`, and what the
 * SDKs send on `stream-input`. Audio is decoded and measured; the books are
 * checked to the character.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import { ElevenLabsClient, ElevenLabs } from '@elevenlabs/elevenlabs-js';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket, type Event } from './helpers/ws-client.js';

let server: TestServer;
let org: TestOrg;
let client: ElevenLabsClient;
before(async () => {
  // An unfinished clause waits 5 s for more text: what is spoken sooner was cut by the chunk schedule.
  server = await startServer({ config: { accounts: { enabled: true }, server: { websocket: { maxBufferDelayMs: 5000 } } } as any });
  org = await newOrg(server, { credits: 1_000_000 });
  client = new ElevenLabsClient({ apiKey: org.key, baseUrl: server.url, maxRetries: 0 });
});
after(() => server.close());

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const TEXT = 'Hello there, this is a test of the voice. It speaks two sentences.';

async function bytesOf(stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
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

describe('REST through the official SDK', () => {
  test('convert: PCM at the asked rate, MP3 by default, charged one credit per character', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const pcm = await bytesOf(await client.textToSpeech.convert(RACHEL, { text: TEXT, modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' }));
    const seconds = pcm.length / 2 / 16000;
    assert.ok(seconds > 2 && seconds < 8, `${seconds} s`);
    assert.ok(rms((await decodeToFloat(pcm, { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 })).samples) > 0.02);
    const mp3 = await bytesOf(await client.textToSpeech.convert(RACHEL, { text: TEXT }));
    const decoded = await decodeToFloat(mp3, { container: 'mp3', sampleRate: 44100 });
    assert.equal(decoded.sampleRate, 44100);
    assert.ok(Math.abs(decoded.samples.length / 44100 - seconds) < 0.3, 'the MP3 is as long as the PCM');
    await charged(before, 2 * TEXT.length);
  });

  test('stream: MP3 frames as they are made; μ-law and A-law at 8 kHz', { timeout: 60_000 }, async () => {
    const response = await client.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'mp3_22050_32' }).withRawResponse();
    assert.equal(response.rawResponse.headers.get('x-character-count'), String(TEXT.length));
    assert.match(response.rawResponse.headers.get('request-id') ?? '', /^req_/);
    const mp3 = await bytesOf(response.data);
    const decoded = await decodeToFloat(mp3, { container: 'mp3', sampleRate: 22050 });
    assert.equal(decoded.sampleRate, 22050);
    assert.ok(decoded.samples.length / 22050 > 2);
    for (const name of ['ulaw_8000', 'alaw_8000'] as const) {
      const bytes = await bytesOf(await client.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: name }));
      const audio = await decodeToFloat(bytes, { container: 'raw', encoding: name === 'ulaw_8000' ? 'pcm_mulaw' : 'pcm_alaw', sampleRate: 8000 });
      assert.ok(Math.abs(bytes.length / 8000 - decoded.samples.length / 22050) < 0.3, `${name} is one byte a sample at 8 kHz`);
      assert.ok(rms(audio.samples) > 0.02, name);
    }
  });

  test('audio is typed as ElevenLabs types it: audio/pcm, audio/basic, audio/mpeg, audio/ogg', { timeout: 60_000 }, async () => {
    const types: Record<string, string> = { pcm_16000: 'audio/pcm', ulaw_8000: 'audio/basic', alaw_8000: 'audio/x-alaw-basic', mp3_44100_128: 'audio/mpeg', opus_48000_64: 'audio/ogg' };
    for (const [format, type] of Object.entries(types)) {
      for (const path of ['', '/stream']) {
        const response = await fetch(`${server.url}/v1/text-to-speech/${RACHEL}${path}?output_format=${format}`, { method: 'POST', headers: { 'xi-api-key': org.key }, body: JSON.stringify({ text: 'Hi.' }) });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), type, `${format}${path}`);
        await response.arrayBuffer();
      }
    }
  });

  test('opus: Ogg Opus at 48 kHz, streamed and whole, as long as the PCM', { timeout: 60_000 }, async () => {
    const pcm = await bytesOf(await client.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'pcm_24000' }));
    for (const bytes of [await bytesOf(await client.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'opus_48000_64' })), await bytesOf(await client.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'opus_48000_128' }))]) {
      const decoded = await decodeToFloat(bytes, { container: 'opus', sampleRate: 48000 });
      assert.equal(decoded.sampleRate, 48000);
      assert.ok(Math.abs(decoded.samples.length / 48000 - pcm.length / 2 / 24000) < 0.03, 'as long as the PCM');
      assert.ok(rms(decoded.samples) > 0.02);
    }
  });

  test('with timestamps: the characters spell the text, times rise, the audio matches', { timeout: 60_000 }, async () => {
    const whole = await client.textToSpeech.convertWithTimestamps(RACHEL, { text: TEXT, outputFormat: 'pcm_22050' });
    assert.equal(whole.alignment!.characters.join(''), TEXT);
    const starts = whole.alignment!.characterStartTimesSeconds;
    for (let i = 1; i < starts.length; i++) assert.ok(starts[i] >= starts[i - 1]);
    const seconds = Buffer.from(whole.audioBase64, 'base64').length / 2 / 22050;
    assert.ok(whole.alignment!.characterEndTimesSeconds.at(-1)! <= seconds + 0.05);

    let spelled = '';
    let audio = 0;
    let lastStart = 0;
    for await (const line of await client.textToSpeech.streamWithTimestamps(RACHEL, { text: TEXT, outputFormat: 'pcm_22050' })) {
      audio += Buffer.from(line.audioBase64 ?? '', 'base64').length;
      if (line.alignment) {
        spelled += line.alignment.characters.join('');
        assert.ok(line.alignment.characterStartTimesSeconds[0] >= lastStart, 'times count from the start of the whole audio');
        lastStart = line.alignment.characterStartTimesSeconds.at(-1)!;
      }
    }
    assert.equal(spelled, TEXT);
    // The same audio streamed and whole, but for the resampler's last few samples.
    assert.ok(Math.abs(audio - Buffer.from(whole.audioBase64, 'base64').length) <= 16, `${audio} bytes streamed`);
  });

  test('alignment spells the text sent, not what a dictionary, SSML or <spell> made of it', { timeout: 60_000 }, async () => {
    const dict = await fetch(`${server.url}/pronunciation-dicts`, {
      method: 'POST',
      headers: { ...org.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'names', items: [{ text: 'Voicegate', alias: 'voice gate' }] }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const said = await client.textToSpeech.convertWithTimestamps(RACHEL, {
      text: 'Welcome to Voicegate today.',
      pronunciationDictionaryLocators: [{ pronunciationDictionaryId: dict.id, versionId: 'latest' }],
    });
    assert.equal(said.alignment!.characters.join(''), 'Welcome to Voicegate today.');
    const ssml = await client.textToSpeech.convertWithTimestamps(RACHEL, { text: '<speak>Say <say-as interpret-as="characters">AB</say-as> now.</speak>' });
    assert.equal(ssml.alignment!.characters.join(''), 'Say AB now.');
    const spelled = await client.textToSpeech.convertWithTimestamps(RACHEL, { text: 'Your code is <spell>AB12</spell> today.' });
    assert.equal(spelled.alignment!.characters.join(''), 'Your code is AB12 today.');
  });

  test('voices, models and the subscription in the SDK types; the subscription follows the ledger', { timeout: 30_000 }, async () => {
    const { voices } = await client.voices.getAll();
    assert.ok(voices.some((v) => v.voiceId === 'sarah' && v.category === 'premade'));
    for (const voice of voices) assert.match(voice.voiceId, /^[A-Za-z0-9_-]+$/, 'ids are URL-safe');
    assert.ok((await client.voices.search()).voices.length === voices.length);
    const models = await client.models.list();
    const flash = models.find((m) => m.modelId === 'eleven_flash_v2_5')!;
    assert.equal(flash.canDoTextToSpeech, true);
    assert.equal(flash.maximumTextLengthPerRequest, 10_000);
    const before = await client.user.subscription.get();
    const { balance } = await balanceOf(server, org.orgId);
    assert.equal(before.characterLimit - before.characterCount, balance);
    await bytesOf(await client.textToSpeech.convert(RACHEL, { text: 'Twelve chars', outputFormat: 'pcm_16000' }));
    const after = await client.user.subscription.get();
    assert.equal(after.characterCount - before.characterCount, 12);
    assert.equal(after.characterLimit, before.characterLimit);
  });

  test('GET /v1/models lists the eleven_* ids first and only models that serve every ElevenLabs format; a format a model refuses names what it takes there', { timeout: 60_000 }, async () => {
    const EVERY = [
      'mp3_22050_32', ...[32, 64, 96, 128, 192].map((k) => `mp3_44100_${k}`), ...[8000, 16000, 22050, 24000, 44100, 48000].flatMap((r) => [`pcm_${r}`, `wav_${r}`]),
      'ulaw_8000', 'alaw_8000', ...[32, 64, 96, 128, 192].map((k) => `opus_48000_${k}`),
    ] as ElevenLabs.TextToSpeechConvertRequestOutputFormat[];
    const ids = (await client.models.list()).map((m) => m.modelId);
    const firstOther = ids.findIndex((id) => !id.startsWith('eleven_'));
    assert.ok(ids[0].startsWith('eleven_') && ids.slice(firstOther).every((id) => !id.startsWith('eleven_')), `the eleven_* ids first: ${ids.join(', ')}`);
    for (const id of ['gepard-1.0', 'omnivoice']) assert.ok(!ids.includes(id), `${id} refuses some of ElevenLabs' formats: not listed (${ids.join(', ')})`);
    // What a client does: take the first model, and ask for any format, whole or streamed.
    for (const outputFormat of EVERY) {
      const clip = await bytesOf(await client.textToSpeech.convert(RACHEL, { text: 'Hi.', modelId: ids[0], outputFormat }));
      // Streamed by hand: the SDK's stream call has no wav_* names, which the /stream route serves too.
      const streamed = await server.post(`/v1/text-to-speech/${RACHEL}/stream?output_format=${outputFormat}`, { text: 'Hi.', model_id: ids[0] }, { 'xi-api-key': org.key });
      assert.equal(streamed.status, 200, `${outputFormat}: ${await streamed.clone().text()}`);
      assert.ok(clip.length > 100 && (await streamed.arrayBuffer()).byteLength > 100, outputFormat);
    }
    for (const modelId of ids) assert.ok((await bytesOf(await client.textToSpeech.convert(RACHEL, { text: 'Hi.', modelId }))).length > 100, modelId);

    // A model named by id still speaks what it can; what it refuses is said in ElevenLabs' format names.
    const refused = async (call: Promise<unknown>, message: string) =>
      assert.rejects(call, (err: any) => {
        assert.equal(err.statusCode, 400);
        assert.equal(err.body.detail.status, 'invalid_output_format');
        assert.equal(err.body.detail.message, message);
        return true;
      });
    const pcm = 'pcm_{8000,16000,22050,24000,44100,48000}';
    await refused(client.textToSpeech.convert(RACHEL, { text: 'Hi.', modelId: 'gepard-1.0' }), `output_format mp3_44100_128 is not available for gepard-1.0; use ${pcm}, ulaw_8000, alaw_8000 or wav_{8000,16000,22050,24000,44100,48000}`);
    await refused(client.textToSpeech.stream(RACHEL, { text: 'Hi.', modelId: 'gepard-1.0', outputFormat: 'mp3_44100_64' }), `output_format mp3_44100_64 is not available for gepard-1.0 when streaming; use ${pcm}, ulaw_8000 or alaw_8000`);
    await refused(client.textToSpeech.convert(RACHEL, { text: 'Hi.', modelId: 'omnivoice', outputFormat: 'opus_48000_64' }), `output_format opus_48000_64 is not available for omnivoice; use mp3_22050_32, mp3_44100_{32,64,96,128,192}, ${pcm}, ulaw_8000, alaw_8000 or wav_{8000,16000,22050,24000,44100,48000}`);
    assert.equal((await bytesOf(await client.textToSpeech.convert(RACHEL, { text: 'Hi.', modelId: 'gepard-1.0', outputFormat: 'pcm_16000' }))).length > 100, true);
  });

  test('errors come as ElevenLabs shapes them, through the SDK, and nothing refused is charged', { timeout: 30_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    await assert.rejects(client.textToSpeech.convert('no-such-voice', { text: 'Hi.' }), (err: any) => {
      assert.equal(err.statusCode, 404);
      assert.equal((err.body as any).detail.status, 'voice_not_found');
      return true;
    });
    await assert.rejects(client.textToSpeech.convert(RACHEL, { text: '' }), (err: any) => {
      assert.ok(err instanceof ElevenLabs.UnprocessableEntityError);
      assert.deepEqual((err.body as any).detail[0].loc, ['body', 'text']);
      return true;
    });
    const stranger = new ElevenLabsClient({ apiKey: 'sk_wrong', baseUrl: server.url, maxRetries: 0 });
    await assert.rejects(stranger.textToSpeech.convert(RACHEL, { text: 'Hi.' }), (err: any) => err.statusCode === 401 && err.body.detail.status === 'invalid_api_key');
    const none = await fetch(`${server.url}/v1/text-to-speech/${RACHEL}`, { method: 'POST', body: JSON.stringify({ text: 'Hi.' }) });
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as any).detail.status, 'needs_authorization');
    const tooLong = await fetch(`${server.url}/v1/text-to-speech/${RACHEL}?output_format=pcm_16000`, { method: 'POST', headers: { 'xi-api-key': org.key }, body: JSON.stringify({ text: 'a'.repeat(10_001) }) });
    assert.equal(tooLong.status, 400);
    assert.equal(((await tooLong.json()) as any).detail.status, 'input_too_long');
    const badFormat = await fetch(`${server.url}/v1/text-to-speech/${RACHEL}?output_format=flac_44100`, { method: 'POST', headers: { 'xi-api-key': org.key }, body: JSON.stringify({ text: 'Hi.' }) });
    assert.equal(badFormat.status, 422);
    const ignored = await fetch(`${server.url}/v1/text-to-speech/${RACHEL}?output_format=pcm_16000&enable_logging=true&optimize_streaming_latency=3`, {
      method: 'POST',
      headers: { 'xi-api-key': org.key },
      body: JSON.stringify({ text: 'Hi.', seed: 7, previous_text: 'Before.', voice_settings: { stability: 0.5, similarity_boost: 0.7, style: 0, use_speaker_boost: true }, something_new: 1 }),
    });
    assert.equal(ignored.status, 200);
    await ignored.arrayBuffer();
    await charged(before, 3);
  });
});

/** A socket on an ElevenLabs WebSocket path. */
function socket(name: 'stream-input' | 'multi-stream-input', query: string, headers: Record<string, string> = { 'xi-api-key': '' }): Promise<TestSocket> {
  return TestSocket.open(server.url, headers['xi-api-key'] === '' ? { 'xi-api-key': org.key } : headers, query, `/v1/text-to-speech/${RACHEL}/${name}`);
}

function audioOf(events: Event[], contextId?: string): Buffer {
  return Buffer.concat(events.filter((e) => e.audio && (contextId === undefined || e.contextId === contextId)).map((e) => Buffer.from(e.audio, 'base64')));
}

/** What Pipecat computes from a context's alignment: a running offset per message (`calculate_word_times`). */
function pipecatWords(events: Event[], contextId: string): [string, number][] {
  let cumulative = 0;
  let partial = '';
  let partialStart = 0;
  const words: [string, number][] = [];
  let first = true;
  for (const e of events.filter((m) => m.contextId === contextId && m.alignment)) {
    let { chars, charStartTimesMs, charDurationsMs } = e.alignment as { chars: string[]; charStartTimesMs: number[]; charDurationsMs: number[] };
    if (first) while (chars[0] === ' ') [chars, charStartTimesMs, charDurationsMs] = [chars.slice(1), charStartTimesMs.slice(1), charDurationsMs.slice(1)];
    first = false;
    let word = partial;
    let start: number | null = partial ? partialStart : null;
    chars.forEach((ch, i) => {
      if (ch === ' ') {
        if (word) words.push([word, start!]);
        word = '';
        start = null;
      } else {
        start ??= cumulative + charStartTimesMs[i] / 1000;
        word += ch;
      }
    });
    partial = word;
    partialStart = start ?? 0;
    if (chars.length > 0) cumulative += (charStartTimesMs.at(-1)! + charDurationsMs.at(-1)!) / 1000;
  }
  if (partial) words.push([partial, partialStart]);
  return words;
}

describe('WebSockets', () => {
  test('stream-input as the SDKs use it: key in the first message, text, the end, one isFinal, then a 1000 close', { timeout: 60_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const ws = await TestSocket.open(server.url, {}, '?model_id=eleven_turbo_v2_5&output_format=pcm_24000', `/v1/text-to-speech/${RACHEL}/stream-input`);
    ws.send({ text: ' ', voice_settings: null, generation_config: { chunk_length_schedule: [50] }, xi_api_key: org.key });
    ws.send({ text: 'Hello there, ', try_trigger_generation: true });
    ws.send({ text: 'this is streamed text. ' });
    ws.send({ text: '' });
    assert.equal(await ws.waitForClose(30_000), 1000);
    const finals = ws.events.filter((e) => e.isFinal === true);
    assert.equal(finals.length, 1);
    assert.equal(ws.events.at(-1)!.isFinal, true, 'nothing after isFinal');
    const pcm = audioOf(ws.events);
    assert.ok(pcm.length / 2 / 24000 > 1, 'a second of audio or more');
    const spelled = ws.events.filter((e) => e.alignment).flatMap((e) => e.alignment.chars).join('');
    assert.equal(spelled, 'Hello there, this is streamed text.');
    await charged(before, ' Hello there, this is streamed text. '.length);
  });

  test('sync_alignment=true, driven as the Python SDK\'s convert_realtime drives it: every audio frame carries the characters that start in it, and no alignment comes without audio', { timeout: 60_000 }, async () => {
    const TEXT = 'Hello there, this is a test of streamed text. It arrives in small pieces, like an answer from a model.';
    // The SDK's text_chunker: words, each ending in a space, sent about 40 ms apart.
    const pieces = TEXT.split(' ').map((word) => `${word} `);
    for (const [format, bytesPerSecond] of [['pcm_16000', 32000], ['mp3_44100_128', 0]] as const) {
      const ws = await socket('stream-input', `?model_id=eleven_flash_v2_5&output_format=${format}&sync_alignment=true`);
      ws.send({ text: ' ', try_trigger_generation: true, voice_settings: null, generation_config: { chunk_length_schedule: [50] } });
      for (const text of pieces) {
        ws.send({ text, try_trigger_generation: true });
        await pause(40);
      }
      ws.send({ text: '' });
      assert.equal(await ws.waitForClose(30_000), 1000);
      const frames = ws.events.filter((e) => 'audio' in e);
      assert.deepEqual(frames.filter((e) => e.alignment && !e.audio).map((e) => e.alignment.chars.join('')), [], `${format}: alignment without audio`);
      assert.equal(frames.filter((e) => e.alignment).flatMap((e) => e.alignment.chars).join(''), TEXT, format);
      if (!bytesPerSecond) continue;
      // On the context's clock (PCM: by bytes): each character's start, read as Pipecat reads it, from where the previous alignment ended.
      const EPSILON = 0.02;
      let at = 0;
      let base = 0;
      const spans: { from: number; to: number; starts: number[] }[] = [];
      for (const frame of frames) {
        const seconds = frame.audio ? Buffer.from(frame.audio, 'base64').length / bytesPerSecond : 0;
        const starts: number[] = [];
        if (frame.alignment) {
          const { charStartTimesMs: begin, charDurationsMs: lasts } = frame.alignment as { charStartTimesMs: number[]; charDurationsMs: number[] };
          for (const ms of begin) starts.push(base + ms / 1000);
          base += (begin.at(-1)! + lasts.at(-1)!) / 1000;
        }
        spans.push({ from: at, to: at + seconds, starts });
        at += seconds;
      }
      const wrong: string[] = [];
      spans.forEach((span, i) => {
        for (const start of span.starts) if (start < span.from - EPSILON || start > span.to + EPSILON) wrong.push(`frame ${i} [${span.from.toFixed(3)}, ${span.to.toFixed(3)}) carries a character starting at ${start.toFixed(3)}`);
        if (span.starts.length === 0 && span.to > span.from) {
          const inside = spans.flatMap((s) => s.starts).filter((start) => start > span.from + EPSILON && start < span.to - EPSILON);
          if (inside.length > 0) wrong.push(`frame ${i} [${span.from.toFixed(3)}, ${span.to.toFixed(3)}) has alignment null, though ${inside.length} characters start in it`);
        }
      });
      assert.deepEqual(wrong, [], wrong.slice(0, 10).join('\n'));
    }
  });

  test('MP3 and Opus on the socket: a context is one stream (one Ogg stream, one encoder), as long as its PCM', { timeout: 60_000 }, async () => {
    const say = async (format: string): Promise<Buffer> => {
      const ws = await socket('stream-input', `?output_format=${format}`);
      ws.send({ text: ' ' });
      ws.send({ text: 'First sentence here. Second one follows, ' });
      ws.send({ text: 'and a third part ends it.' });
      ws.send({ text: '' });
      assert.equal(await ws.waitForClose(30_000), 1000);
      return audioOf(ws.events);
    };
    const pcmSeconds = (await say('pcm_24000')).length / 2 / 24000;
    const opus = await say('opus_48000_64');
    assert.equal(opus.toString('latin1').split('OpusHead').length - 1, 1, 'one Ogg Opus stream');
    const fromOpus = await decodeToFloat(opus, { container: 'opus', sampleRate: 48000 });
    assert.ok(Math.abs(fromOpus.samples.length / 48000 - pcmSeconds) < 0.01, `Opus ${fromOpus.samples.length / 48000} s, PCM ${pcmSeconds} s`);
    const fromMp3 = await decodeToFloat(await say('mp3_44100_128'), { container: 'mp3', sampleRate: 44100 });
    // One encoder's delay and padding, not one for each clause.
    assert.ok(fromMp3.samples.length / 44100 - pcmSeconds < 0.06 && fromMp3.samples.length / 44100 >= pcmSeconds, `MP3 ${fromMp3.samples.length / 44100} s, PCM ${pcmSeconds} s`);
    assert.ok(rms(fromOpus.samples) > 0.02 && rms(fromMp3.samples) > 0.02);
  });

  test('chunk_length_schedule: an unfinished clause as long as the schedule says is spoken at once, up to its last whole word', { timeout: 30_000 }, async () => {
    const ws = await socket('stream-input', '?output_format=pcm_16000');
    ws.send({ text: ' ', generation_config: { chunk_length_schedule: [50] } });
    const started = Date.now();
    ws.send({ text: 'this clause has no punctuation in it and it goes on and on without end ' });
    ws.send({ text: 'still going' });
    await ws.waitFor((e) => e.audio, 4_000);
    assert.ok(Date.now() - started < 4_000, 'spoken before the 5 s buffer delay');
    ws.send({ text: '' });
    assert.equal(await ws.waitForClose(20_000), 1000);
    const spelled = ws.events.filter((e) => e.alignment).flatMap((e) => e.alignment.chars).join('');
    assert.equal(spelled, 'this clause has no punctuation in it and it goes on and on without end still going');
  });

  test('a socket without a key anywhere is refused; a bad model id before the upgrade', { timeout: 30_000 }, async () => {
    const ws = await TestSocket.open(server.url, {}, '', `/v1/text-to-speech/${RACHEL}/stream-input`);
    ws.send({ text: ' ' });
    assert.equal(await ws.waitForClose(), 1008);
    assert.equal(ws.events[0].error, 'needs_authorization');
    await assert.rejects(socket('stream-input', '?model_id=no_such_model&output_format=pcm_nope'), (err: any) => err.status === 400 && JSON.parse(err.body).detail.status === 'invalid_output_format');
    // A model that cannot stream the asked format (MP3 by default) is refused with the names it streams.
    await assert.rejects(socket('stream-input', '?model_id=gepard-1.0'), (err: any) => {
      assert.equal(err.status, 400);
      assert.equal(JSON.parse(err.body).detail.message, 'output_format mp3_44100_128 is not available for gepard-1.0 when streaming; use pcm_{8000,16000,22050,24000,44100,48000}, ulaw_8000 or alaw_8000');
      return true;
    });
  });

  test('multi-stream-input as Pipecat drives it: keepalives, interleaved contexts, flush, close_context on interruption, a context id used again', { timeout: 90_000 }, async () => {
    const before = (await balanceOf(server, org.orgId)).balance;
    const ws = await socket('multi-stream-input', '?model_id=eleven_flash_v2_5&output_format=pcm_16000&auto_mode=false');
    ws.send({ text: '' }); // keepalive before any context
    ws.send({ text: ' ', context_id: 'a', voice_settings: { stability: 0.5, speed: 1.1 } });
    ws.send({ text: 'First turn of the bot, spoken whole. ', context_id: 'a' });
    ws.send({ text: '', context_id: 'a' }); // keepalive of an open context
    ws.send({ text: ' ', context_id: 'b' });
    ws.send({ text: 'A second context at the same time. ', context_id: 'b' });
    ws.send({ context_id: 'a', flush: true });
    ws.send({ context_id: 'b', flush: true });
    ws.send({ context_id: 'a', close_context: true });
    ws.send({ context_id: 'b', close_context: true });
    await ws.waitFor((e) => e.isFinal === true && e.contextId === 'a', 30_000);
    await ws.waitFor((e) => e.isFinal === true && e.contextId === 'b', 30_000);
    for (const id of ['a', 'b']) {
      const events = ws.events.filter((e) => e.contextId === id);
      assert.equal(events.filter((e) => e.isFinal).length, 1);
      assert.equal(events.at(-1)!.isFinal, true, 'nothing for a context after its isFinal');
      assert.ok(audioOf(ws.events, id).length / 2 / 16000 > 0.8);
    }
    // Pipecat's words: the text, in order, at rising times that stay within the audio.
    const words = pipecatWords(ws.events, 'a');
    assert.deepEqual(words.map(([w]) => w), ['First', 'turn', 'of', 'the', 'bot,', 'spoken', 'whole.']);
    for (let i = 1; i < words.length; i++) assert.ok(words[i][1] >= words[i - 1][1]);
    assert.ok(words.at(-1)![1] < audioOf(ws.events, 'a').length / 2 / 16000);

    // Interruption: close_context while text is unflushed; then the same id opens a new context.
    ws.send({ text: ' ', context_id: 'a' });
    ws.send({ text: 'This long answer gets interrupted before it is flushed and never', context_id: 'a' });
    ws.send({ context_id: 'a', close_context: true });
    await ws.waitFor((e) => e.isFinal === true && e.contextId === 'a' && ws.events.filter((m) => m.isFinal && m.contextId === 'a').length === 2, 30_000);
    ws.send({ text: ' ', context_id: 'a' });
    ws.send({ text: 'Back again. ', context_id: 'a', flush: true });
    ws.send({ context_id: 'a', close_context: true });
    await ws.waitFor(() => ws.events.filter((m) => m.isFinal && m.contextId === 'a').length === 3, 30_000);
    ws.send({ close_socket: true });
    assert.equal(await ws.waitForClose(), 1000);
    const text = [' ', 'First turn of the bot, spoken whole. ', ' ', 'A second context at the same time. ', ' ', 'This long answer gets interrupted before it is flushed and never', ' ', 'Back again. '];
    const interrupted = ws.events.filter((e) => e.contextId === 'a' && e.audio).length;
    assert.ok(interrupted > 0);
    // Charged as native turns are: every character a turn that spoke took in.
    const spoken = text.join('').length - 'This long answer gets interrupted before it is flushed and never'.length - 1;
    const { balance } = await balanceOf(server, org.orgId);
    assert.ok(before - balance === spoken || before - balance === text.join('').length, `charged ${before - balance}`);
  });

  test('LiveKit: flush and close_context back to back end a turn with all its audio; alignment times as LiveKit reads them', { timeout: 60_000 }, async () => {
    const ws = await socket('multi-stream-input', '?model_id=eleven_turbo_v2_5&output_format=pcm_22050&enable_ssml_parsing=false&enable_logging=true&inactivity_timeout=180&apply_text_normalization=auto&sync_alignment=true');
    ws.send({ text: ' ', voice_settings: {}, context_id: 'lk1' });
    ws.send({ text: 'Good morning. ', context_id: 'lk1' });
    ws.send({ text: 'How can I help? ', context_id: 'lk1' });
    ws.send({ text: '', context_id: 'lk1', flush: true });
    ws.send({ context_id: 'lk1', close_context: true });
    await ws.waitFor((e) => e.isFinal === true && e.contextId === 'lk1', 30_000);
    const chars = ws.events.filter((e) => e.contextId === 'lk1' && e.alignment).flatMap((e) => e.alignment.chars).join('');
    assert.equal(chars, 'Good morning. How can I help?');
    for (const e of ws.events.filter((m) => m.alignment)) {
      assert.equal(e.alignment.chars.length, e.alignment.charStartTimesMs.length);
      assert.equal(e.alignment.chars.length, e.alignment.charDurationsMs.length);
    }
    ws.close();
  });

  test('more contexts than the bound are refused with an error for that context; the others go on', { timeout: 60_000 }, async () => {
    const bounded = await startServer({ config: { accounts: { enabled: true }, elevenlabs: { maxContexts: 2 } } as any });
    try {
      const own = await newOrg(bounded, { credits: 10_000 });
      const ws = await TestSocket.open(bounded.url, { 'xi-api-key': own.key }, '?output_format=pcm_16000', `/v1/text-to-speech/${RACHEL}/multi-stream-input`);
      for (const id of ['x', 'y', 'z']) ws.send({ text: ' ', context_id: id });
      const refused = await ws.waitFor((e) => e.contextId === 'z' && e.error);
      assert.equal(refused.error, 'too_many_contexts');
      // Its later messages are dropped (told once); `{"text": " "}` opens it again once there is room.
      ws.send({ text: 'Dropped. ', context_id: 'z' });
      ws.send({ text: 'Still here. ', context_id: 'x', flush: true });
      ws.send({ context_id: 'x', close_context: true });
      await ws.waitFor((e) => e.isFinal && e.contextId === 'x', 30_000);
      ws.send({ text: ' ', context_id: 'z' });
      ws.send({ text: 'Room now. ', context_id: 'z', flush: true });
      ws.send({ context_id: 'z', close_context: true });
      await ws.waitFor((e) => e.isFinal && e.contextId === 'z', 30_000);
      assert.equal(ws.events.filter((e) => e.contextId === 'z' && e.error).length, 1, 'refused once');
      ws.close();
    } finally {
      await bounded.close();
    }
  });
});
