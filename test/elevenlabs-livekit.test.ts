/**
 * @module test/elevenlabs-livekit
 * LiveKit Agents' own ElevenLabs plugin (`@livekit/agents-plugin-elevenlabs`
 * 1.9.0, unchanged) pointed at a real server by its `baseURL`:
 * `tts.synthesize()` over `POST /v1/text-to-speech/{voice_id}/stream`, and
 * `tts.stream()` over `multi-stream-input`, one context per turn on one
 * socket the plugin keeps open between turns. The frames it yields are
 * measured, its timed transcripts read, the ledger checked to the character,
 * and `tts.close()` must leave nothing in flight or reserved on the server.
 * The plugin's own warnings and `error` events are recorded: a healthy turn
 * has none.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { initializeLogger, log, type TimedString, type tts as agents } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import type { AudioFrame } from '@livekit/rtc-node';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { until } from './helpers/poll.js';

// The plugin logs through the agents' process-wide logger and throws if it was never made.
// Its warnings and errors are kept here (and not printed) so a test can show and assert them.
initializeLogger({ pretty: false, level: 'warn' });
const logged: string[] = [];
/** Errors in a logged object by their message (JSON drops it). */
const errorText = (_key: string, value: unknown) => (value instanceof Error ? `${value.name}: ${printable(value.message, 80)}` : value);
/** Called after each warning or error the plugin logs. */
let onLogged: (() => void) | undefined;
const logger = log() as unknown as Record<string, unknown>;
for (const level of ['warn', 'error', 'fatal']) {
  logger[level] = (first: unknown, message?: string) => {
    logged.push(printable(`${level}: ${message ?? (typeof first === 'string' ? first : '')} ${typeof first === 'object' ? JSON.stringify(first, errorText) : ''}`, 300));
    onLogged?.();
  };
}

let server: TestServer;
let org: TestOrg;
/** Every TTS made, closed at the end even if a test gave up on it. */
const made = new Set<elevenlabs.TTS>();
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(async () => {
  for (const tts of made) await tts.close();
  await server.close();
});

const RATE = 22050;
/** No retries in a stream: a failure shows as itself, not as the plugin's fourth attempt. */
const ONCE = { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 10_000 };

/** The plugin as an agent would make it, aimed here. */
function livekitTts(voiceId = 'sarah'): { tts: elevenlabs.TTS; errors: string[] } {
  const tts = new elevenlabs.TTS({ baseURL: `${server.url}/v1`, apiKey: org.key, model: 'eleven_flash_v2_5', voiceId, encoding: 'pcm_22050' });
  made.add(tts);
  const errors: string[] = [];
  tts.on('error', (event) => void errors.push(`${event.label}: ${printable(event.error.message)}`));
  return { tts, errors };
}

/** The start of a message, without what a binary body put in it. */
function printable(text: string, length = 160): string {
  return text.replace(/[^\x20-\x7e]+/g, '…').slice(0, length);
}

/** Waits for the ledger to settle `expected` characters below `before`; the balance is the ledger's sum throughout. */
async function charged(before: number, expected: number): Promise<void> {
  let spent = 0;
  await until(async () => {
    const { balance, sum } = await balanceOf(server, org.orgId);
    assert.equal(balance, sum, 'the balance is the sum of the ledger');
    spent = before - balance;
    return spent >= expected;
  }, { timeoutMs: 10_000, intervalMs: 0, what: `${expected} characters charged` }).catch(() => {});
  assert.equal(spent, expected, 'charged characters');
}

/** Nothing of the organisation's is being spoken or reserved. */
async function idle(): Promise<void> {
  const { activity, store } = server.app.services;
  await until(() => activity.syntheses(org.orgId) === 0, { timeoutMs: 10_000, intervalMs: 0, what: 'no synthesis in flight' });
  await until(async () => (await store.ledger.reserved(org.orgId)) === 0, { timeoutMs: 10_000, intervalMs: 0, what: 'no reservation' });
}

function seconds(frames: AudioFrame[]): number {
  return frames.reduce((total, frame) => total + frame.samplesPerChannel, 0) / RATE;
}

/** RMS of the frames' 16-bit samples, full scale 1. */
function loudness(frames: AudioFrame[]): number {
  let sum = 0;
  let count = 0;
  for (const frame of frames) {
    for (const sample of frame.data) sum += (sample / 32768) ** 2;
    count += frame.data.length;
  }
  return Math.sqrt(sum / count);
}

function checkFrames(frames: AudioFrame[], minSeconds: number, maxSeconds: number): void {
  assert.ok(frames.length > 0, 'audio frames');
  for (const frame of frames) {
    assert.equal(frame.sampleRate, RATE);
    assert.equal(frame.channels, 1);
  }
  const length = seconds(frames);
  assert.ok(length > minSeconds && length < maxSeconds, `${length.toFixed(2)} s of audio`);
  assert.ok(loudness(frames) > 0.02, `RMS ${loudness(frames).toFixed(4)}: speech, not silence`);
}

interface Turn {
  audio: agents.SynthesizedAudio[];
  frames: AudioFrame[];
  words: TimedString[];
}

/** Reads a stream to its end. */
async function drain(stream: elevenlabs.SynthesizeStream): Promise<Turn> {
  const audio: agents.SynthesizedAudio[] = [];
  for await (const item of stream) if (item !== elevenlabs.SynthesizeStream.END_OF_STREAM) audio.push(item);
  return { audio, frames: audio.map((a) => a.frame), words: audio.flatMap((a) => a.timedTranscripts ?? []) };
}

/** One turn as an agent speaks an LLM's answer: text in pieces, a flush, the end of input. */
async function speak(tts: elevenlabs.TTS, pieces: string[]): Promise<Turn> {
  const stream = tts.stream({ connOptions: ONCE });
  for (const piece of pieces) stream.pushText(piece);
  stream.flush();
  stream.endInput();
  return drain(stream);
}

function checkTurn(turn: Turn): void {
  const finals = turn.audio.filter((a) => a.final);
  assert.equal(finals.length, 1, 'one final frame');
  assert.equal(turn.audio.at(-1)!.final, true, 'the final frame is the last');
  assert.equal(new Set(turn.audio.map((a) => a.segmentId)).size, 1, 'one segment: one context');
}

describe('the LiveKit ElevenLabs plugin', () => {
  beforeEach(() => void (logged.length = 0));
  const SENTENCE = 'Hello there, this is a test of the voice through the plugin.';

  test(
    'synthesize(): PCM frames at 22,050 Hz over REST /stream, charged once for the text',
    {
      timeout: 60_000,
    },
    async () => {
      const { tts, errors } = livekitTts();
      try {
        const before = (await balanceOf(server, org.orgId)).balance;
        const chunked = tts.synthesize(SENTENCE);
        // The plugin retries a failed request three times (each one spoken and charged) and then
        // rejects a promise nobody awaits, its message the whole response body; an agent that stops
        // at the first failure closes the stream, which ends it quietly.
        onLogged = () => chunked.close();
        const audio: agents.SynthesizedAudio[] = [];
        for await (const item of chunked) audio.push(item);
        assert.deepEqual([...logged], [], 'the plugin neither retried nor failed');
        assert.deepEqual(errors, [], 'the plugin reported no error');
        checkFrames(audio.map((a) => a.frame), 2, 10);
        assert.equal(audio.filter((a) => a.final).length, 1);
        assert.equal(audio.at(-1)!.final, true);
        await charged(before, SENTENCE.length);
        await idle();
      } finally {
        onLogged = undefined;
        await tts.close();
      }
    },
  );

  describe('stream() over multi-stream-input', () => {
    let voice: ReturnType<typeof livekitTts>;
    before(() => void (voice = livekitTts()));
    after(() => voice.tts.close());

    // The plugin (autoMode, its default without a chunk schedule) sends `" "` to open a context, then
    // each sentence its tokenizer makes with one space after it: a text of single spaces costs 2 more.
    const PIECES = ['Hello there. ', 'This is LiveKit talking ', 'to Voicegate, one piece at a time. ', 'The last sentence ends here.'];
    const TEXT = PIECES.join('');

    test('a turn pushed in pieces: its audio, its words in order, its charge', { timeout: 60_000 }, async () => {
      const before = (await balanceOf(server, org.orgId)).balance;
      const turn = await speak(voice.tts, PIECES);
      assert.deepEqual(voice.errors, [], 'the plugin reported no error');
      checkTurn(turn);
      checkFrames(turn.frames, 3, 15);
      const audioSeconds = seconds(turn.frames);

      // The timed transcripts spell the words, each once, in order.
      assert.deepEqual(
        turn.words.map((w) => w.text.trim()),
        TEXT.split(' '),
      );
      // What the plugin makes of the times: Voicegate counts each message's alignment from where the
      // previous one ended (as Pipecat reads it); the plugin reads every message's times as they come,
      // less the first non-zero start time it saw (the second character's), with no running offset. Its word times therefore start
      // again near zero with each message that carries alignment (a word whose end falls in the next
      // message can even end before it starts), and stay within the audio.
      for (const word of turn.words) {
        assert.ok(word.startTime! >= 0 && word.endTime! >= 0, `${word.text}: ${word.startTime}–${word.endTime}`);
        assert.ok(word.startTime! <= audioSeconds && word.endTime! <= audioSeconds);
      }
      const restarts = turn.words.filter((w, i) => i > 0 && w.startTime! < turn.words[i - 1].startTime!).length;
      assert.ok(restarts > 0, 'the times restart with a later message');

      await charged(before, TEXT.length + 2);
      await idle();
      assert.equal(server.app.services.activity.websockets(org.orgId), 1, 'the plugin keeps its socket open for the next turn');
      assert.deepEqual([...logged], [], 'the plugin logged no warning');
    });

    test('more turns on the same TTS: the same socket, a new context each', { timeout: 60_000 }, async () => {
      const connection = await voice.tts.currentConnection();
      assert.equal(server.app.services.activity.websockets(org.orgId), 1);
      const before = (await balanceOf(server, org.orgId)).balance;
      const first = await speak(voice.tts, ['Here is the second answer. ', 'It comes on the socket that is already open.']);
      const second = await speak(voice.tts, ['And a third, ', 'right after it.']);
      assert.deepEqual(voice.errors, []);
      for (const turn of [first, second]) checkTurn(turn);
      assert.notEqual(first.audio[0].segmentId, second.audio[0].segmentId, 'each turn its own context');
      checkFrames(first.frames, 2, 12);
      checkFrames(second.frames, 0.8, 6);
      assert.deepEqual(
        second.words.map((w) => w.text.trim()),
        ['And', 'a', 'third,', 'right', 'after', 'it.'],
      );
      assert.equal(await voice.tts.currentConnection(), connection, 'the plugin kept its connection');
      assert.equal(server.app.services.activity.websockets(org.orgId), 1, 'one socket for every turn');
      const text = 'Here is the second answer. It comes on the socket that is already open.'.length + 2 + 'And a third, right after it.'.length + 2;
      await charged(before, text);
      await idle();
      assert.deepEqual([...logged], []);
    });
  });

  test('close() in the middle of a turn: the stream ends, nothing stays in flight or reserved, what was charged is in the ledger', { timeout: 60_000 }, async () => {
    const { tts, errors } = livekitTts();
    const before = (await balanceOf(server, org.orgId)).balance;
    const stream = tts.stream({ connOptions: ONCE });
    const long = 'This answer is long enough that it is still being spoken when the agent is shut down. '.repeat(6);
    stream.pushText(long);
    stream.flush();
    let first: IteratorResult<unknown> | undefined;
    void stream.next().then((result) => (first = result));
    try {
      await until(() => first !== undefined, { timeoutMs: 30_000, intervalMs: 0, what: 'the first audio' });
    } finally {
      if (!first) await tts.close();
    }
    assert.equal(first!.done, false, 'the first audio came');
    assert.ok(server.app.services.activity.syntheses(org.orgId) > 0, 'still speaking');

    await tts.close();
    await drain(stream); // ends: the plugin aborted it
    await idle();
    await until(() => server.app.services.activity.websockets(org.orgId) === 0, { timeoutMs: 10_000, intervalMs: 0, what: 'the socket closed' });
    await until(async () => (await balanceOf(server, org.orgId)).balance < before, { timeoutMs: 10_000, intervalMs: 0, what: 'the turn charged' });
    const { balance, sum } = await balanceOf(server, org.orgId);
    assert.equal(balance, sum);
    // The turn had spoken, so what the server took in of it is charged (as any turn that spoke); never more than the plugin sent.
    assert.ok(before - balance > 0 && before - balance <= long.trim().length + 2, `charged ${before - balance}`);
    assert.deepEqual(errors, [], 'closing is not an error');
  });

  test('a voice the server does not know: the turn fails with ElevenLabs\' error, it does not hang, nothing is charged', { timeout: 60_000 }, async () => {
    const { tts, errors } = livekitTts('no-such-voice');
    try {
      const before = (await balanceOf(server, org.orgId)).balance;
      const turn = await speak(tts, ['Nobody will hear this.']);
      assert.equal(turn.frames.length, 0);
      assert.equal(errors.length, 1, errors.join('\n'));
      // The server refuses the context once; the plugin's later messages for it (the text, the final
      // flush, close_context) are dropped, so it logs the one error it failed the turn with.
      assert.equal(logged.length, 1, logged.join('\n'));
      assert.match(logged[0], /^error: elevenlabs tts returned error .*"error":"voice_not_found"/);
      await idle();
      assert.equal((await balanceOf(server, org.orgId)).balance, before);
    } finally {
      await tts.close();
    }
  });
});
