/**
 * @module synthesis/pipeline.test
 * The 16-bit path (an engine's own Int16 samples sent as they are) gives the
 * same bytes as the Float32 path it replaces, for raw and WAV clips and for
 * streams; other formats and volumes keep the Float32 path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutputFormat } from '../audio/format.js';
import type { Engine } from '../engines/engine.js';
import { offersInt16 } from '../engines/pcm16.js';
import { ToneEngine } from '../engines/tone/engine.js';
import { NAMED_VOICES } from '../voices/builtin.js';
import { renderClip, synthesizeAudio } from './pipeline.js';
import type { SynthesisRequest } from './request.js';

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

function request(engine: Engine, format: OutputFormat, options: { volume?: number; streaming?: boolean } = {}): SynthesisRequest {
  return {
    engine,
    format,
    settings: { speed: 1, volume: options.volume ?? 1 },
    text: 'Hello there, this is a test of the pipeline.',
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

  it('other rates and volumes take the Float32 path and still match', async () => {
    const signal = new AbortController().signal;
    const resampled = { container: 'raw', encoding: 'pcm_s16le', sampleRate: 16000 } as OutputFormat;
    assert.deepEqual((await renderClip(request(tone, resampled), signal)).audio, (await renderClip(request(floatOnly, resampled), signal)).audio);
    const native = { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 } as OutputFormat;
    const quiet = (await renderClip(request(tone, native, { volume: 0.5 }), signal)).audio;
    assert.deepEqual(quiet, (await renderClip(request(floatOnly, native, { volume: 0.5 }), signal)).audio);
    assert.notDeepEqual(quiet, (await renderClip(request(tone, native), signal)).audio);
  });
});
