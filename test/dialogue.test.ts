/**
 * @module test/dialogue
 * Multi-speaker dialogue against a real server: `POST /tts/dialogue` (whole
 * clips in every output format, and `stream: true` as /tts/sse's events with
 * the words' voices) and ElevenLabs' `/v1/text-to-dialogue` family through
 * the official SDK. The audio is checked: a dialogue is each turn's own audio
 * in order, joined by the configured pause, and the turns are told apart by
 * their pitch. The books are checked to the character: a dialogue is charged
 * the sum of its turns, and bad input is refused before anything is charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ElevenLabsClient, ElevenLabs } from '@elevenlabs/elevenlabs-js';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import type { OutputFormat } from '../src/audio/format.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
let client: ElevenLabsClient;
before(async () => {
  // The tone engine is deterministic (each voice its own pitch): a dialogue's audio can be compared byte for byte.
  server = await startServer({ config: { accounts: { enabled: true }, voices: { dialogue: { maxTurns: 4 } }, models: { 'tone-dialogue': { extends: 'omnivoice', engine: 'tone' } } } as any });
  org = await newOrg(server, { credits: 1_000_000 });
  client = new ElevenLabsClient({ apiKey: org.key, baseUrl: server.url, maxRetries: 0 });
});
after(() => server.close());

const RATE = 22050;
const PAUSE = 0.3;
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE } as const;
/** The tone engine's rate: its audio as made. */
const TONE_RATE = 24000;
const TONE = { model_id: 'tone-dialogue', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: TONE_RATE } } as const;
/** Sarah (eSpeak's f3 variant) and Michael (m3): a high voice and a low one, turn about. */
const TURNS = [
  { transcript: 'Welcome back to the show. How was your week?', voice: 'sarah' },
  { transcript: 'Busy, but good. I finally finished the garden.', voice: 'michael' },
  { transcript: 'That is wonderful news!', voice: 'sarah' },
];
const CHARACTERS = TURNS.reduce((sum, turn) => sum + turn.transcript.length, 0);

function dialogueBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model_id: 'omnivoice',
    inputs: TURNS.map((turn) => ({ transcript: turn.transcript, voice: { mode: 'id', id: turn.voice } })),
    output_format: RAW,
    ...overrides,
  };
}

async function balance(): Promise<number> {
  const { balance, sum } = await balanceOf(server, org.orgId);
  assert.equal(balance, sum, 'the balance is the ledger');
  return balance;
}

/** Waits (bounded) until the balance has fallen by exactly `expected` credits from `before`. */
async function charged(before: number, expected: number): Promise<void> {
  let now = before;
  const settled = await eventually(async () => before - (now = await balance()) === expected, 10_000);
  assert.ok(settled, `charged ${before - now} credits; expected ${expected}`);
}

/** Each turn's own audio from /tts/bytes (its voice, alone) on `model`, as 16-bit PCM at `rate`: what a dialogue is made of. */
const turnAudio = new Map<string, Promise<Buffer[]>>();
function ownAudio(model: string = TONE.model_id, rate = TONE_RATE): Promise<Buffer[]> {
  const key = `${model}@${rate}`;
  if (!turnAudio.has(key)) {
    const made = Promise.all(
      TURNS.map(async (turn) => {
        const body = { model_id: model, transcript: turn.transcript, voice: { mode: 'id', id: turn.voice }, output_format: { ...RAW, sample_rate: rate } };
        const response = await server.post('/tts/bytes', body, org.auth);
        assert.equal(response.status, 200, await response.clone().text());
        return Buffer.from(await response.arrayBuffer());
      }),
    );
    turnAudio.set(key, made);
  }
  return turnAudio.get(key)!;
}

/** The tone dialogue as it must be: each turn's own audio, with the pause's zeros between. */
async function expectedToneDialogue(): Promise<Buffer> {
  const own = await ownAudio();
  const pause = Buffer.alloc(Math.round(PAUSE * TONE_RATE) * 2);
  return Buffer.concat([own[0], pause, own[1], pause, own[2]]);
}

/** Where each turn's audio starts and ends in an eSpeak dialogue, in seconds. */
async function turnSpans(): Promise<{ start: number; end: number }[]> {
  let at = 0;
  return (await ownAudio('omnivoice', RATE)).map((audio, index) => {
    if (index > 0) at += PAUSE;
    const span = { start: at, end: at + audio.length / 2 / RATE };
    at = span.end;
    return span;
  });
}

/** The voice's fundamental frequency over `samples` (Hz): the median of voiced frames' autocorrelation peaks, 70–400 Hz. */
function pitchOf(samples: Float32Array, rate: number): number {
  const frame = Math.round(0.04 * rate);
  const minLag = Math.floor(rate / 400);
  const maxLag = Math.ceil(rate / 70);
  const found: number[] = [];
  for (let start = 0; start + frame + maxLag < samples.length; start += frame) {
    const window = samples.subarray(start, start + frame + maxLag);
    if (rms(window.subarray(0, frame)) < 0.03) continue;
    let energy = 0;
    for (let i = 0; i < frame; i++) energy += window[i] * window[i];
    let best = 0;
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += window[i] * window[i + lag];
      if (sum > best) [best, bestLag] = [sum, lag];
    }
    if (bestLag > 0 && best / energy > 0.5) found.push(rate / bestLag);
  }
  assert.ok(found.length > 5, `${found.length} voiced frames`);
  found.sort((a, b) => a - b);
  return found[found.length >> 1];
}

/** The dialogue's samples between `from` and `to` seconds. */
function slice(samples: Float32Array, rate: number, from: number, to: number): Float32Array {
  return samples.subarray(Math.round(from * rate), Math.round(to * rate));
}

describe('POST /tts/dialogue', () => {
  test('a clip is each turn in its own voice, in order, joined by the pause; charged the sum of the turns', { timeout: 60_000 }, async () => {
    const expected = await expectedToneDialogue();
    const before = await balance();
    const response = await server.post('/tts/dialogue', dialogueBody(TONE), org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    const audio = Buffer.from(await response.arrayBuffer());
    assert.equal(audio.length, expected.length);
    assert.ok(audio.equals(expected), 'turn 1, 0.3 s of silence, turn 2, 0.3 s of silence, turn 3');
    // Spoken in one voice, the turns are other audio: each was spoken in its own.
    const oneVoice = await server.post('/tts/dialogue', dialogueBody({ ...TONE, inputs: TURNS.map((turn) => ({ transcript: turn.transcript, voice: 'sarah' })) }), org.auth);
    assert.ok(!Buffer.from(await oneVoice.arrayBuffer()).equals(expected));
    await charged(before, 2 * CHARACTERS);
  });

  const FORMATS: { name: string; format: Record<string, unknown>; decoded: OutputFormat }[] = [
    { name: 'WAV 16-bit 22,050 Hz', format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 }, decoded: { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 } },
    { name: 'WAV 32-bit float 44,100 Hz', format: { container: 'wav', encoding: 'pcm_f32le', sample_rate: 44100 }, decoded: { container: 'wav', encoding: 'pcm_f32le', sampleRate: 44100 } },
    { name: 'raw 32-bit float 24 kHz', format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 }, decoded: { container: 'raw', encoding: 'pcm_f32le', sampleRate: 24000 } },
    { name: 'raw 16-bit 16 kHz', format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, decoded: { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 } },
    { name: 'μ-law 8 kHz', format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }, decoded: { container: 'raw', encoding: 'pcm_mulaw', sampleRate: 8000 } },
    { name: 'A-law 8 kHz', format: { container: 'raw', encoding: 'pcm_alaw', sample_rate: 8000 }, decoded: { container: 'raw', encoding: 'pcm_alaw', sampleRate: 8000 } },
    { name: 'MP3 44,100 Hz 128 kbit/s', format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 }, decoded: { container: 'mp3', sampleRate: 44100 } },
    { name: 'MP3 22,050 Hz 32 kbit/s', format: { container: 'mp3', sample_rate: 22050, bit_rate: 32000 }, decoded: { container: 'mp3', sampleRate: 22050 } },
  ];
  for (const { name, format, decoded } of FORMATS) {
    test(`${name}: the turns' length and pauses, the speakers told apart by pitch, charged the sum`, { timeout: 60_000 }, async () => {
      const spans = await turnSpans();
      const before = await balance();
      const response = await server.post('/tts/dialogue', dialogueBody({ output_format: format }), org.auth);
      assert.equal(response.status, 200, await response.clone().text());
      const { samples, sampleRate } = await decodeToFloat(Buffer.from(await response.arrayBuffer()), decoded);
      const seconds = samples.length / sampleRate;
      // MP3 adds its encoder's delay and pads its last frame.
      const slack = decoded.container === 'mp3' ? 0.12 : 0.03;
      assert.ok(Math.abs(seconds - spans[2].end) <= slack, `${seconds.toFixed(3)} s; the turns and pauses make ${spans[2].end.toFixed(3)} s`);
      // An MP3's audio lags by its encoder's delay; the middle of each pause is silent whatever the format.
      for (const [a, b] of [[spans[0], spans[1]], [spans[1], spans[2]]]) {
        const quiet = rms(slice(samples, sampleRate, a.end + 0.08, b.start - 0.08));
        assert.ok(quiet < 0.005, `the pause between turns is silent (rms ${quiet.toFixed(4)})`);
      }
      const high = pitchOf(slice(samples, sampleRate, spans[0].start, spans[0].end), sampleRate);
      const low = pitchOf(slice(samples, sampleRate, spans[1].start, spans[1].end), sampleRate);
      const highAgain = pitchOf(slice(samples, sampleRate, spans[2].start, spans[2].end), sampleRate);
      assert.ok(high > low * 1.3 && highAgain > low * 1.3, `Sarah ${high.toFixed(0)} Hz, Michael ${low.toFixed(0)} Hz, Sarah ${highAgain.toFixed(0)} Hz`);
      await charged(before, CHARACTERS);
    });
  }

  test('stream: /tts/sse events; the same audio as the clip; words in order, each with its voice, after the pause', { timeout: 60_000 }, async () => {
    const expected = await expectedToneDialogue();
    const before = await balance();
    const response = await server.post('/tts/dialogue', dialogueBody({ ...TONE, stream: true, add_timestamps: true }), org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.trim())
      .map((block) => JSON.parse(block.replace(/^data: /, '')) as Record<string, any>);
    assert.equal(events.at(-1)!.type, 'done');
    const audio = Buffer.concat(events.filter((e) => e.type === 'chunk').map((e) => Buffer.from(e.data, 'base64')));
    assert.ok(audio.equals(expected), 'the streamed audio is the clip');
    const timestamps = events.filter((e) => e.type === 'timestamps').map((e) => e.word_timestamps);
    const words = timestamps.flatMap((t) => t.words);
    const voices = timestamps.flatMap((t) => t.voices);
    const starts = timestamps.flatMap((t) => t.start);
    const ends = timestamps.flatMap((t) => t.end);
    assert.deepEqual(words, TURNS.flatMap((turn) => turn.transcript.split(' ')));
    assert.deepEqual(voices, TURNS.flatMap((turn) => turn.transcript.split(' ').map(() => turn.voice)));
    // Each turn's first word starts after the last turn's last word and the pause.
    const firsts = [0, 1, 2].map((i) => TURNS.slice(0, i).reduce((n, turn) => n + turn.transcript.split(' ').length, 0));
    for (const i of [1, 2]) assert.ok(starts[firsts[i]] >= ends[firsts[i] - 1] + PAUSE - 0.002, `turn ${i} starts at ${starts[firsts[i]]}, after ${ends[firsts[i] - 1]} + the pause`);
    await charged(before, CHARACTERS);
  });

  test('the audio cache answers the same dialogue again, never one whose turns have other voices', { timeout: 60_000 }, async () => {
    const body = dialogueBody({ ...TONE, inputs: [{ transcript: 'Is this cached?', voice: 'sarah' }, { transcript: 'It should be.', voice: 'michael' }] });
    const first = await server.post('/tts/dialogue', body, org.auth);
    assert.equal(first.headers.get('x-cache'), 'miss');
    const again = await server.post('/tts/dialogue', body, org.auth);
    assert.equal(again.headers.get('x-cache'), 'hit');
    const audio = Buffer.from(await first.arrayBuffer());
    assert.ok(Buffer.from(await again.arrayBuffer()).equals(audio));
    // The same texts and first voice, another second voice: other audio, made anew.
    const swapped = await server.post('/tts/dialogue', dialogueBody({ ...TONE, inputs: [{ transcript: 'Is this cached?', voice: 'sarah' }, { transcript: 'It should be.', voice: 'emma' }] }), org.auth);
    assert.equal(swapped.headers.get('x-cache'), 'miss');
    assert.ok(!Buffer.from(await swapped.arrayBuffer()).equals(audio));
  });

  test('the pause between speakers is the configured one (voices.dialogue.pauseMs)', { timeout: 60_000 }, async () => {
    const own = await ownAudio();
    const other = await startServer({ config: { voices: { dialogue: { pauseMs: 750 } }, models: { 'tone-dialogue': { extends: 'omnivoice', engine: 'tone' } } } as any });
    try {
      const response = await other.post('/tts/dialogue', dialogueBody(TONE));
      assert.equal(response.status, 200, await response.clone().text());
      const pause = Buffer.alloc(Math.round(0.75 * TONE_RATE) * 2);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(Buffer.concat([own[0], pause, own[1], pause, own[2]])), 'the turns, 0.75 s apart');
    } finally {
      await other.close();
    }
  });

  test('an SSML turn beside a text turn: its words as spoken, in its voice; charged as each alone', { timeout: 60_000 }, async () => {
    const ssml = '<speak>Good <emphasis>morning</emphasis>, <break strength="medium"/> Michael &amp; friends.</speak>';
    const text = 'Morning <break time="200ms"/> to you.';
    const alone = async (transcript: string, voice: string): Promise<number> => {
      const before = await balance();
      const response = await server.post('/tts/bytes', { ...TONE, transcript, voice }, org.auth);
      assert.equal(response.status, 200, await response.clone().text());
      await response.arrayBuffer();
      return before - (await balance());
    };
    const cost = (await alone(ssml, 'sarah')) + (await alone(text, 'michael'));
    const before = await balance();
    const inputs = [{ transcript: ssml, voice: 'sarah' }, { transcript: text, voice: 'michael', transcript_type: 'text' }];
    const response = await server.post('/tts/dialogue', dialogueBody({ ...TONE, inputs, stream: true, add_timestamps: true }), org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.trim())
      .map((block) => JSON.parse(block.replace(/^data: /, '')) as Record<string, any>);
    const timestamps = events.filter((e) => e.type === 'timestamps').map((e) => e.word_timestamps);
    assert.deepEqual(timestamps.flatMap((t) => t.words), ['Good', 'morning,', 'Michael', '&', 'friends.', 'Morning', 'to', 'you.']);
    assert.deepEqual(timestamps.flatMap((t) => t.voices), ['sarah', 'sarah', 'sarah', 'sarah', 'sarah', 'michael', 'michael', 'michael']);
    await charged(before, cost);
  });

  test('bad input is refused before anything is charged', { timeout: 60_000 }, async () => {
    const before = await balance();
    const cases: { body: Record<string, unknown>; status: number; code: string; says?: RegExp }[] = [
      { body: dialogueBody({ inputs: [{ transcript: 'Hello.', voice: 'sarah' }, { transcript: '', voice: 'michael' }] }), status: 400, code: 'empty_dialogue_turn', says: /inputs\[1\]/ },
      { body: dialogueBody({ inputs: [{ transcript: '   ', voice: 'sarah' }] }), status: 400, code: 'empty_dialogue_turn', says: /inputs\[0\]/ },
      { body: dialogueBody({ inputs: [{ transcript: 'Hello.', voice: 'sarah' }, { transcript: 'Hi.', voice: { mode: 'id', id: 'ghost' } }] }), status: 404, code: 'voice_not_found', says: /ghost/ },
      { body: dialogueBody({ inputs: Array.from({ length: 5 }, () => ({ transcript: 'Hi.', voice: 'sarah' })) }), status: 400, code: 'too_many_dialogue_turns', says: /5 inputs; the maximum is 4/ },
      { body: dialogueBody({ inputs: [{ transcript: 'a '.repeat(1300), voice: 'sarah' }, { transcript: 'b '.repeat(1300), voice: 'michael' }] }), status: 400, code: 'input_too_long', says: /5200 characters; the maximum is 5000/ },
      { body: dialogueBody({ inputs: [{ transcript: 'Hello.', voice: 'sarah' }, { transcript: '<speak>Hi <break time="fast"/></speak>', voice: 'michael' }] }), status: 400, code: 'invalid_ssml' },
      { body: dialogueBody({ inputs: [] }), status: 400, code: 'invalid_request', says: /inputs/ },
      { body: dialogueBody({ inputs: undefined }), status: 400, code: 'invalid_request', says: /inputs/ },
      { body: dialogueBody({ inputs: [{ transcript: 'Hello.', voice: { mode: 'id', id: '' } }] }), status: 400, code: 'missing_voice_id' },
      { body: dialogueBody({ inputs: [{ transcript: 'Hello.', voice: 'sarah' }, { transcript: 'Hi.', voice: 'michael' }], output_format: { container: 'flac', sample_rate: 22050 } }), status: 400, code: 'invalid_output_format' },
    ];
    for (const { body, status, code, says } of cases) {
      for (const stream of [false, true]) {
        const response = await server.post('/tts/dialogue', { ...body, stream }, org.auth);
        const answer = (await response.json()) as { error_code: string; message: string };
        assert.equal(response.status, status, `${code}: ${JSON.stringify(answer)}`);
        assert.equal(answer.error_code, code);
        if (says) assert.match(answer.message, says);
      }
    }
    assert.equal(await balance(), before, 'nothing charged');
  });
});

describe('ElevenLabs text-to-dialogue through the official SDK', () => {
  const inputs: ElevenLabs.DialogueInput[] = TURNS.map((turn) => ({ text: turn.transcript, voiceId: turn.voice }));

  async function bytesOf(stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }

  test('convert and stream: the same dialogue as /tts/dialogue, charged the sum of the turns', { timeout: 60_000 }, async () => {
    const expected = await expectedToneDialogue();
    const before = await balance();
    const pcm = await client.textToDialogue.convert({ inputs, modelId: TONE.model_id, outputFormat: 'pcm_24000' }).withRawResponse();
    assert.equal(pcm.rawResponse.headers.get('x-character-count'), String(CHARACTERS));
    assert.ok((await bytesOf(pcm.data)).equals(expected), 'each turn in its voice, with the pause');
    // ElevenLabs' default model streams MP3 (it is eSpeak, as omnivoice is).
    const mp3 = await bytesOf(await client.textToDialogue.stream({ inputs, outputFormat: 'mp3_44100_128' }));
    const decoded = await decodeToFloat(mp3, { container: 'mp3', sampleRate: 44100 });
    const spans = await turnSpans();
    assert.ok(Math.abs(decoded.samples.length / 44100 - spans[2].end) < 0.12, 'the MP3 is as long as the dialogue');
    await charged(before, 2 * CHARACTERS);
  });

  test('with timestamps: the alignment spells the turns; voice_segments give each turn its voice, time and characters', { timeout: 60_000 }, async () => {
    const spans = await turnSpans();
    const before = await balance();
    const whole = await client.textToDialogue.convertWithTimestamps({ inputs, modelId: 'omnivoice', outputFormat: 'pcm_22050' });
    // Words may be timed a little past their turn's own audio by eSpeak's trailing silence; never into the next turn's.
    const text = TURNS.map((turn) => turn.transcript).join(' ');
    assert.equal(whole.alignment!.characters.join(''), text);
    assert.deepEqual(
      whole.voiceSegments.map((s) => [s.voiceId, s.dialogueInputIndex, text.slice(s.characterStartIndex, s.characterEndIndex)]),
      TURNS.map((turn, i) => [turn.voice, i, turn.transcript]),
    );
    whole.voiceSegments.forEach((segment, i) => {
      assert.ok(segment.startTimeSeconds >= spans[i].start - 0.03 && segment.endTimeSeconds <= spans[i].end + 0.03, `turn ${i}'s words (${segment.startTimeSeconds}–${segment.endTimeSeconds} s) lie within its audio (${spans[i].start}–${spans[i].end} s)`);
    });
    const pcm = Buffer.from(whole.audioBase64, 'base64');
    assert.ok(Math.abs(pcm.length / 2 / RATE - spans[2].end) < 0.03, 'the turns and the pauses');

    // The tone engine is deterministic: the streamed lines carry the clip's audio.
    const toneClip = await client.textToDialogue.convertWithTimestamps({ inputs, modelId: TONE.model_id, outputFormat: 'pcm_24000' });
    const lines = await client.textToDialogue.streamWithTimestamps({ inputs, modelId: TONE.model_id, outputFormat: 'pcm_24000' });
    const streamed: ElevenLabs.VoiceSegment[] = [];
    const audio: Buffer[] = [];
    for await (const line of lines) {
      audio.push(Buffer.from(line.audioBase64, 'base64'));
      streamed.push(...line.voiceSegments);
    }
    assert.ok(Buffer.concat(audio).equals(Buffer.from(toneClip.audioBase64, 'base64')), 'the streamed audio is the clip');
    assert.deepEqual([...new Set(streamed.map((s) => `${s.dialogueInputIndex}:${s.voiceId}`))], TURNS.map((turn, i) => `${i}:${turn.voice}`));
    await charged(before, 3 * CHARACTERS);
  });

  test('errors: an unknown voice is 404, an empty turn 422, through the SDK’s error classes; nothing charged', { timeout: 30_000 }, async () => {
    const before = await balance();
    await assert.rejects(client.textToDialogue.convert({ inputs: [...inputs, { text: 'Hi.', voiceId: 'ghost' }] }), (err: any) => {
      assert.equal(err.statusCode, 404);
      assert.equal(err.body.detail.status, 'voice_not_found');
      return true;
    });
    await assert.rejects(client.textToDialogue.convertWithTimestamps({ inputs: [inputs[0], { text: ' ', voiceId: 'michael' }] }), (err: any) => {
      assert.ok(err instanceof ElevenLabs.UnprocessableEntityError);
      assert.deepEqual((err.body as any).detail[0].loc, ['body', 'inputs', 1, 'text']);
      return true;
    });
    assert.equal(await balance(), before, 'nothing charged');
  });
});

describe('a long-form job whose inputs have voices of their own', () => {
  async function waitFor(id: string): Promise<any> {
    let job: any;
    const ended = await eventually(async () => {
      job = await (await fetch(`${server.url}/tts/jobs/${id}`, { headers: org.auth })).json();
      return ['succeeded', 'failed', 'cancelled'].includes(job.status);
    }, 60_000, 50);
    assert.ok(ended, `job still ${job?.status}`);
    return job;
  }

  test('one job speaks every input in its voice, between the jobs’ pauses; its timestamps name the voices; charged the sum', { timeout: 90_000 }, async () => {
    const own = await ownAudio();
    const before = await balance();
    const inputs = TURNS.map((turn, i) => ({ transcript: turn.transcript, ...(i === 0 ? {} : { voice: { mode: 'id', id: turn.voice } }) }));
    // The job's voice speaks the inputs that name none: here Sarah, whose turn is first.
    const response = await server.post('/tts/jobs', { ...TONE, voice: 'sarah', inputs, add_timestamps: true }, org.auth);
    assert.equal(response.status, 202, await response.clone().text());
    const job = await waitFor(((await response.json()) as { id: string }).id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const audio = Buffer.from(await (await fetch(`${server.url}/tts/jobs/${job.id}/audio`, { headers: org.auth })).arrayBuffer());
    // Inputs are parted by `jobs.inputPauseMs` (1 s by default).
    const pause = Buffer.alloc(TONE_RATE * 2);
    assert.ok(audio.equals(Buffer.concat([own[0], pause, own[1], pause, own[2]])), 'each input in its own voice, in order');
    const { word_timestamps: timestamps } = (await (await fetch(`${server.url}/tts/jobs/${job.id}/timestamps`, { headers: org.auth })).json()) as any;
    assert.deepEqual(timestamps.words, TURNS.flatMap((turn) => turn.transcript.split(' ')));
    assert.deepEqual(timestamps.voices, TURNS.flatMap((turn) => turn.transcript.split(' ').map(() => turn.voice)));
    await charged(before, CHARACTERS);
  });

  test('an SSML input with a voice of its own is read as SSML at submit', { timeout: 60_000 }, async () => {
    const inputs = [{ transcript: 'Hello.' }, { transcript: '<speak>Hi <break strength="medium"/> there.</speak>', voice: 'michael' }];
    const response = await server.post('/tts/jobs', { ...TONE, voice: 'sarah', inputs }, org.auth);
    assert.equal(response.status, 202, await response.clone().text());
    const job = await waitFor(((await response.json()) as { id: string }).id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  });

  test('an input’s unknown voice is refused at submit, before anything is held', { timeout: 30_000 }, async () => {
    const before = await balance();
    const response = await server.post('/tts/jobs', { ...TONE, voice: 'sarah', inputs: [{ transcript: 'Hello.' }, { transcript: 'Hi.', voice: 'ghost' }] }, org.auth);
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error_code: string }).error_code, 'voice_not_found');
    assert.equal(await balance(), before);
  });
});
