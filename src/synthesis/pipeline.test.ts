/**
 * @module synthesis/pipeline.test
 * The 16-bit path (an engine's own Int16 samples sent as they are, or scaled
 * in one pass) gives the same bytes as the Float32 path it replaces, for raw
 * and WAV clips, for streams and for any gain; other formats take the
 * 16-bit samples through the Float32 path, converted in the gain's pass. Silence segments last exactly their length at any output
 * rate, and word timings of later segments count from the start. An engine
 * that runs the output stage itself (engines/staged) gives the bytes the
 * pipeline makes on its own thread, across segments, silences and gains.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutputFormat } from '../audio/format.js';
import type { Engine, EngineInput } from '../engines/engine.js';
import { OutputStage } from '../audio/output-stage.js';
import { int16ToFloat } from '../audio/pcm.js';
import { offersInt16, type Int16Engine } from '../engines/pcm16.js';
import { offersStaging, type StagingEngine } from '../engines/staged.js';
import { ToneEngine } from '../engines/tone/engine.js';
import { NAMED_VOICES } from '../voices/builtin.js';
import { renderClip, synthesizeAudio } from './pipeline.js';
import type { SynthesisRequest } from './request.js';
import { speechSegments, type SpeechSegment } from './segments.js';
import { MappedText } from './text-map.js';
import { BUILTIN_MODELS } from '../models/builtin.js';

/** A text segment at speed 1 (as the transcript's own text, from its start). */
function spoken(text: string, gain: number): SpeechSegment {
  return { kind: 'text', text, speed: 1, gain, source: MappedText.copied(text, 0) };
}

const tone = new ToneEngine({ id: 'tone', sampleRate: 24000, secondsPerChar: 0.06, chunkSeconds: 0.1 });

/** The same engine without the Int16 capability, so the pipeline takes the Float32 path. */
const floatOnly: Engine = {
  id: tone.id,
  type: tone.type,
  sampleRate: tone.sampleRate,
  start: () => tone.start(),
  stop: () => tone.stop(),
  isReady: () => tone.isReady(),
  supportsVoice: (voice) => tone.supportsVoice(voice),
  synthesize: (input, signal) => tone.synthesize(input, signal),
  info: () => tone.info(),
};

/** Float32 chunks that are the tone's 16-bit ones ÷ 32767, as the eSpeak pool's are. */
const quantized: Engine = {
  ...floatOnly,
  async *synthesize(input, signal) {
    for await (const chunk of tone.synthesizeInt16(input, signal)) yield { samples: int16ToFloat(chunk.samples), words: chunk.words };
  },
};

/**
 * The tone engine running the output stage itself, the way a worker pool does: from the cursor's
 * state, in pieces, with the state written back at the end. It records each stage it was given.
 */
const stagingTone = (stages: { gain: number }[]): StagingEngine & Int16Engine => ({
  ...floatOnly,
  synthesizeInt16: (input, signal) => tone.synthesizeInt16(input, signal),
  async *synthesizeStaged(input, cursor, signal) {
    stages.push({ gain: cursor.gain });
    const stage = new OutputStage(cursor.spec, structuredClone(cursor.state));
    for await (const chunk of tone.synthesizeInt16(input, signal)) {
      const audio = stage.encode(chunk.samples, cursor.gain);
      yield chunk.words ? { audio, made: chunk.samples.length, words: chunk.words } : { audio, made: chunk.samples.length };
    }
    cursor.state = stage.state();
  },
});

function request(engine: Engine, format: OutputFormat, options: { volume?: number; streaming?: boolean; segments?: SpeechSegment[] } = {}): SynthesisRequest {
  return {
    engine,
    format,
    settings: { speed: 1, volume: options.volume ?? 1 },
    segments: options.segments ?? [spoken('Hello there, this is a test of the pipeline.', options.volume ?? 1)],
    voice: NAMED_VOICES[0],
    language: null,
    wordTimestamps: false,
    streaming: options.streaming ?? false,
  } as unknown as SynthesisRequest;
}

async function streamed(engine: Engine, format: OutputFormat): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of synthesizeAudio(request(engine, format, { streaming: true }), new AbortController().signal)) pieces.push(piece.audio);
  return Buffer.concat(pieces);
}

describe('pipeline: 16-bit path', () => {
  it('the tone engine offers it', () => {
    assert.equal(offersInt16(tone), true);
    assert.equal(offersInt16(floatOnly), false);
  });

  for (const container of ['raw', 'wav'] as const) {
    it(`${container} pcm_s16le at the engine rate: bytes equal the Float32 path`, async () => {
      const format = { container, encoding: 'pcm_s16le', sampleRate: 24000 } as OutputFormat;
      const signal = new AbortController().signal;
      const direct = (await renderClip(request(tone, format), signal)).audio;
      assert.ok(direct.length > 40_000);
      assert.deepEqual(direct, (await renderClip(request(floatOnly, format), signal)).audio);
      assert.deepEqual(await streamed(tone, format), await streamed(floatOnly, format));
    });
  }

  it('other rates and encodings take the 16-bit samples through the Float32 path, f32 excepted; a volume scales the 16-bit samples', async () => {
    const signal = new AbortController().signal;
    for (const format of [
      { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 },
      { container: 'raw', encoding: 'pcm_mulaw', sampleRate: 8000 },
      { container: 'wav', encoding: 'pcm_alaw', sampleRate: 44100 },
    ] as OutputFormat[]) {
      for (const volume of [1, 0.5]) {
        const direct = (await renderClip(request(tone, format, { volume }), signal)).audio;
        assert.deepEqual(direct, (await renderClip(request(quantized, format, { volume }), signal)).audio, `${format.encoding} ${format.sampleRate} Hz, volume ${volume}`);
      }
    }
    // f32 output keeps the engine's own floats, which may carry more than 16 bits.
    const f32 = { container: 'wav', encoding: 'pcm_f32le', sampleRate: 44100 } as OutputFormat;
    assert.deepEqual((await renderClip(request(tone, f32), signal)).audio, (await renderClip(request(floatOnly, f32), signal)).audio);
    const native = { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 } as OutputFormat;
    const quiet = (await renderClip(request(tone, native, { volume: 0.5 }), signal)).audio;
    assert.deepEqual(quiet, (await renderClip(request(quantized, native, { volume: 0.5 }), signal)).audio);
    assert.notDeepEqual(quiet, (await renderClip(request(tone, native), signal)).audio);
  });
});

describe('pipeline: segments', () => {
  const signal = new AbortController().signal;
  const raw = (rate: number) => ({ container: 'raw', encoding: 'pcm_s16le', sampleRate: rate }) as OutputFormat;

  it('a silence segment adds exactly its length, resampled or not', async () => {
    for (const rate of [24000, 16000, 44100]) {
      const speech: SpeechSegment = spoken('Hello there.', 1);
      const alone = (await renderClip(request(tone, raw(rate), { segments: [speech] }), signal)).audio.length / 2;
      const twice = (await renderClip(request(tone, raw(rate), { segments: [speech, speech] }), signal)).audio.length / 2;
      const spaced = await renderClip(request(tone, raw(rate), { segments: [speech, { kind: 'silence', seconds: 1 }, speech] }), signal);
      const added = (spaced.audio.length / 2 - twice) / rate;
      assert.ok(Math.abs(added - 1) < 0.002, `${rate} Hz: ${added} s added`);
      assert.ok(alone > 0);
      // The silence is real zeros, one run of at least a second.
      const samples = new Int16Array(spaced.audio.buffer, spaced.audio.byteOffset, spaced.audio.length / 2);
      let run = 0;
      let longest = 0;
      for (const s of samples) longest = Math.max(longest, (run = s === 0 ? run + 1 : 0));
      assert.ok(longest >= rate * 0.99, `${rate} Hz: longest zero run ${longest}`);
    }
  });

  it('gain on the 16-bit path gives the Float32 path\'s bytes for an engine whose floats are its 16-bit samples (eSpeak)', async () => {
    for (const gain of [0.37, 1.9, 3.5]) {
      const segments: SpeechSegment[] = [spoken('Hello there, louder and softer.', gain)];
      const direct = (await renderClip(request(tone, raw(24000), { segments }), signal)).audio;
      assert.deepEqual(direct, (await renderClip(request(quantized, raw(24000), { segments }), signal)).audio, `gain ${gain}`);
      assert.notDeepEqual(direct, (await renderClip(request(tone, raw(24000)), signal)).audio);
    }
  });

  it('word timings of a later segment count from the start of the audio', async () => {
    const transcript = 'one two<break time="0.5s"/>three';
    const segments = speechSegments(transcript, { model: BUILTIN_MODELS['gepard-1.0'], settings: { speed: 1, volume: 1 }, streaming: true, pronunciation: null, voiceGain: 1 });
    const words = [];
    for await (const piece of synthesizeAudio({ ...request(tone, raw(24000), { segments }), transcript, wordTimestamps: true }, signal)) words.push(...(piece.words ?? []));
    assert.deepEqual(words.map((w) => w.word), ['one', 'two', 'three']);
    // "one two" is 7 characters at 0.06 s each, then half a second of silence.
    assert.ok(Math.abs(words[2].start - (7 * 0.06 + 0.5)) < 0.01, `three starts at ${words[2].start}`);
  });
});

describe('pipeline: output stage in the engine', () => {
  const signal = new AbortController().signal;
  const segments: SpeechSegment[] = [
    spoken('Hello there, this is the first part.', 0.6),
    { kind: 'silence', seconds: 0.33 },
    spoken('And a second, louder part.', 1.8),
  ];

  it("an engine that stages gives the pipeline's own bytes, continued across segments and silence", async () => {
    for (const format of [
      { container: 'raw', encoding: 'pcm_mulaw', sampleRate: 8000 },
      { container: 'wav', encoding: 'pcm_s16le', sampleRate: 48000 },
      { container: 'raw', encoding: 'pcm_alaw', sampleRate: 24000 },
    ] as OutputFormat[]) {
      const stages: { gain: number }[] = [];
      const engine = stagingTone(stages);
      assert.equal(offersStaging(engine), true);
      const staged = (await renderClip(request(engine, format, { segments }), signal)).audio;
      assert.deepEqual(staged, (await renderClip(request(tone, format, { segments }), signal)).audio, `${format.encoding} ${format.sampleRate} Hz`);
      assert.deepEqual(stages, [{ gain: 0.6 }, { gain: 1.8 }], "each speech segment's stage carries its gain");
      const pieces: Buffer[] = [];
      for await (const piece of synthesizeAudio(request(engine, format, { segments, streaming: true }), signal)) pieces.push(piece.audio);
      const streamed = Buffer.concat(pieces);
      assert.deepEqual(streamed.subarray(format.container === 'wav' ? 44 : 0), staged.subarray(format.container === 'wav' ? 44 : 0), 'streamed as the clip');
    }
  });

  it("a 16-bit engine's s16 at its own rate and Speex rate pairs do not stage", async () => {
    const stages: { gain: number }[] = [];
    for (const format of [
      { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 },
      { container: 'raw', encoding: 'pcm_s16le', sampleRate: 22050 },
    ] as OutputFormat[]) {
      const audio = (await renderClip(request(stagingTone(stages), format), signal)).audio;
      assert.ok(audio.length > 1000);
    }
    assert.equal(stages.length, 0);
  });

  it('MP3 and Opus are made from Float32 a stage in the workers makes, where a FIR filter joins the rates', async () => {
    for (const format of [
      { container: 'mp3', sampleRate: 24000, bitRate: 64000 },
      { container: 'mp3', sampleRate: 48000, bitRate: 128000 },
      { container: 'opus', sampleRate: 48000, bitRate: 64000 },
    ] as OutputFormat[]) {
      const stages: { gain: number }[] = [];
      const staged = (await renderClip(request(stagingTone(stages), format), signal)).audio;
      assert.ok(stages.length > 0, `${format.container} ${format.sampleRate} Hz staged`);
      const here = (await renderClip(request(tone, format), signal)).audio;
      // The same audio as made on this thread: the same length, near enough the same bytes (a lossy encoder).
      assert.ok(Math.abs(staged.length - here.length) <= 0.02 * here.length, `${format.container} ${staged.length} vs ${here.length}`);
    }
  });
});

describe('pipeline: playback', { timeout: 10_000 }, () => {
  /** The tone engine, recording what each segment asked of it. */
  const recording = (inputs: EngineInput[]): Engine => ({
    ...floatOnly,
    synthesize(input, signal) {
      inputs.push(input);
      return tone.synthesize(input, signal);
    },
  });
  const format = { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 } as OutputFormat;
  const segments: SpeechSegment[] = [
    spoken('First part.', 1),
    { kind: 'silence', seconds: 0.25 },
    spoken('Second part.', 1),
  ];

  it("a segment after the request's first audio continues it; the first segment does not", async () => {
    const inputs: EngineInput[] = [];
    const before = performance.now();
    await renderClip(request(recording(inputs), format, { segments }), new AbortController().signal);
    assert.equal(inputs.length, 2);
    assert.equal(inputs[0].playback, undefined);
    const { startedAt, seconds } = inputs[1].playback!;
    assert.ok(startedAt >= before && startedAt <= performance.now());
    assert.ok(Math.abs(seconds - ('First part.'.length * 0.06 + 0.25)) < 0.01, `${seconds} s of audio before the second segment`);
  });

  it("a request that continues a listener's audio (a WebSocket context's next clause) passes it on, counted on", async () => {
    const inputs: EngineInput[] = [];
    const playback = { startedAt: 1234, seconds: 7 };
    await renderClip({ ...request(recording(inputs), format, { segments }), playback }, new AbortController().signal);
    assert.deepEqual(inputs[0].playback, playback);
    assert.equal(inputs[1].playback!.startedAt, 1234);
    assert.ok(inputs[1].playback!.seconds > 7.9);
  });
});
