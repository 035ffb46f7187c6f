/**
 * @module test/tts-bytes.formats
 * Every allowed model × container × encoding × sample rate (× mp3 bit rate)
 * through /tts/bytes: the bytes are decoded and checked for the requested
 * rate, a duration matching the engine's own output, and real speech level.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Container, OutputFormat } from '../src/audio/format.js';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { knownGain } from '../src/synthesis/voice-gain.js';
import { mp3BitRateProblem } from '../src/audio/mp3.js';
import { OPUS_SAMPLE_RATES } from '../src/audio/opus.js';
import { BUILTIN_MODELS } from '../src/models/builtin.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

const TRANSCRIPT = 'Your appointment is confirmed for Tuesday at two.';
const OPUS_BIT_RATES = [32000, 64000, 96000, 128000, 192000];
const OPUS_RULES = { containers: ['wav', 'raw', 'opus'] as Container[], opusBitRates: OPUS_BIT_RATES, defaultOpusBitRate: 64000 };
let server: TestServer;
let engineSeconds = 0;

before(async () => {
  server = await startServer({
    config: {
      models: {
        'tone-check': { extends: 'omnivoice', engine: 'tone' },
        // No shipped model offers Ogg Opus; an operator's model can.
        'opus-check': { extends: 'omnivoice', clip: OPUS_RULES, stream: OPUS_RULES },
      },
    },
  });
  const engine = server.app.services.engines.get('espeak')!;
  const voice = (await server.app.services.voices.get('sarah', null))!;
  let samples = 0;
  for await (const chunk of engine.synthesize({ text: TRANSCRIPT, voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
    samples += chunk.samples.length;
  }
  engineSeconds = samples / engine.sampleRate;
});
after(() => server.close());

function wireFormat(format: OutputFormat): Record<string, unknown> {
  return format.container === 'mp3' || format.container === 'opus'
    ? { container: format.container, sample_rate: format.sampleRate, bit_rate: format.bitRate }
    : { container: format.container, encoding: format.encoding, sample_rate: format.sampleRate };
}

async function checkClip(model: string, format: OutputFormat, stream = false): Promise<void> {
  const response = await server.post('/tts/bytes', ttsBody({ model_id: model, transcript: TRANSCRIPT, output_format: wireFormat(format), ...(stream ? { stream } : {}) }));
  const bytes = Buffer.from(await response.arrayBuffer());
  assert.equal(response.status, 200, bytes.toString());
  const expectedType = { wav: 'audio/wav', mp3: 'audio/mpeg', opus: 'audio/ogg', raw: 'application/octet-stream', flac: 'audio/flac' }[format.container];
  assert.equal(response.headers.get('content-type'), expectedType);
  if (!stream) assert.equal(Number(response.headers.get('content-length')), bytes.length);
  const decoded = await decodeToFloat(bytes, format);
  // Ogg Opus always decodes at 48 kHz; its header names the rate it was made at.
  if (format.container === 'opus') {
    assert.equal(decoded.sampleRate, 48000);
    // The engine's 22,050 Hz is encoded from 24 kHz (its whole band), never above the rate asked for.
    assert.equal(bytes.readUInt32LE(28 + 12), Math.min(format.sampleRate, 24000), 'OpusHead input rate');
  } else assert.equal(decoded.sampleRate, format.sampleRate);
  const seconds = decoded.samples.length / decoded.sampleRate;
  // mp3 adds encoder delay and frame padding (< 2 frames); PCM and Opus (its pre-skip and end
  // granule trim the decoder's output) match to a few samples.
  const frameSamples = format.sampleRate >= 32000 ? 1152 : 576;
  const tolerance = format.container === 'mp3' ? (1105 + 2 * frameSamples) / format.sampleRate : 0.005;
  assert.ok(Math.abs(seconds - engineSeconds) <= tolerance, `duration ${seconds.toFixed(4)} s vs engine ${engineSeconds.toFixed(4)} s`);
  const level = rms(decoded.samples);
  assert.ok(level > 0.02, `speech level ${level}`);
}

for (const model of Object.values(BUILTIN_MODELS)) {
  describe(`${model.id} clips`, () => {
    for (const container of model.clip.containers) {
      if (container === 'mp3') {
        for (const sampleRate of model.clip.sampleRates) {
          const allowed = model.clip.mp3BitRates.filter((bitRate) => !mp3BitRateProblem(sampleRate, bitRate));
          test(`mp3 ${sampleRate} Hz at ${allowed.join(', ')} bps`, async () => {
            assert.ok(allowed.length > 0);
            for (const bitRate of allowed) await checkClip(model.id, { container, sampleRate, bitRate });
          });
        }
        continue;
      }
      if (container === 'opus') {
        const rates = model.clip.sampleRates.filter((rate) => OPUS_SAMPLE_RATES.includes(rate));
        test(`opus at ${rates.join(', ')} Hz, every listed bit rate`, async () => {
          for (const sampleRate of rates) await checkClip(model.id, { container, sampleRate, bitRate: model.clip.defaultOpusBitRate });
          for (const bitRate of model.clip.opusBitRates ?? []) await checkClip(model.id, { container, sampleRate: 48000, bitRate });
        });
        continue;
      }
      // FLAC is 16-bit.
      for (const encoding of container === 'flac' ? (['pcm_s16le'] as const) : model.clip.encodings) {
        test(`${container} ${encoding} at ${model.clip.sampleRates.join(', ')} Hz`, async () => {
          for (const sampleRate of model.clip.sampleRates) await checkClip(model.id, { container, encoding, sampleRate });
        });
      }
    }
  });
}

describe('opus on a model that allows it', () => {
  test('clips at every rate Opus takes, streamed and not', async () => {
    for (const sampleRate of [8000, 16000, 24000, 48000]) {
      for (const stream of [false, true]) await checkClip('opus-check', { container: 'opus', sampleRate, bitRate: 64000 }, stream);
    }
  });
  test(`every listed bit rate: ${OPUS_BIT_RATES.join(', ')}`, async () => {
    for (const bitRate of OPUS_BIT_RATES) await checkClip('opus-check', { container: 'opus', sampleRate: 48000, bitRate });
  });
  test('the bit rate defaults to the profile’s; what Opus or the profile cannot do is a 400 that says why', async () => {
    const post = (output_format: Record<string, unknown>, model_id = 'opus-check') => server.post('/tts/bytes', ttsBody({ model_id, transcript: TRANSCRIPT, output_format }));
    const ok = await post({ container: 'opus', sample_rate: 24000 });
    assert.equal(ok.status, 200);
    assert.equal(Buffer.from(await ok.arrayBuffer()).toString('latin1', 0, 4), 'OggS');
    for (const [output_format, reason, model] of [
      [{ container: 'opus', sample_rate: 22050 }, /opus does not support a sample rate of 22050 Hz; use one of 8000, 16000, 24000, 48000/],
      [{ container: 'opus', sample_rate: 48000, bit_rate: 320000 }, /bit_rate must be one of 32000, 64000, 96000, 128000, 192000; got 320000/],
      [{ container: 'opus', encoding: 'pcm_s16le', sample_rate: 48000 }, /encoding is not accepted with container opus/],
      [{ container: 'opus', sample_rate: 48000 }, /container must be one of raw, wav/, 'gepard-1.0'],
      [{ container: 'opus', sample_rate: 48000 }, /container must be one of wav, mp3, raw/, 'omnivoice'],
    ] as const) {
      const response = await post(output_format, model);
      const body = (await response.json()) as { error_code: string; message: string };
      assert.equal(response.status, 400);
      assert.equal(body.error_code, 'invalid_output_format');
      assert.match(body.message, reason);
    }
  });
});

describe('defaults and exact rates', () => {
  test('omnivoice: encoding defaults to pcm_s16le; mp3 bit rate defaults to 128 kbps', async () => {
    const wav = await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', output_format: { container: 'wav', sample_rate: 24000 } }));
    const bytes = Buffer.from(await wav.arrayBuffer());
    assert.equal(bytes.readUInt16LE(20), 1); // PCM
    assert.equal(bytes.readUInt16LE(34), 16); // 16-bit
    const mp3 = await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', output_format: { container: 'mp3', sample_rate: 44100 } }));
    const frame = Buffer.from(await mp3.arrayBuffer());
    // MPEG-1 layer III bit-rate index 9 = 128 kbps.
    const sync = frame.indexOf(Buffer.from([0xff]));
    assert.equal(frame[sync + 2] >> 4, 9);
  });
  test('a request at the engine rate skips resampling: bit-identical to the engine output', async () => {
    // The tone engine is deterministic (eSpeak adds random breath noise), so outputs can be compared exactly.
    const engine = server.app.services.engines.get('tone')!;
    const voice = (await server.app.services.voices.get('sarah', null))!;
    const made: number[] = [];
    for await (const chunk of engine.synthesize({ text: TRANSCRIPT, voice, speed: 1, wordTimings: false }, new AbortController().signal)) made.push(...chunk.samples);
    // The tone is made at the loudness target, so no gain touches it on the way out.
    assert.equal(knownGain(engine, voice), 1);
    const parts = [...Float32Array.from(made)];
    const request = (sample_rate: number) =>
      server.post('/tts/bytes', ttsBody({ model_id: 'tone-check', transcript: TRANSCRIPT, output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate } }));
    const native = await decodeToFloat(Buffer.from(await (await request(engine.sampleRate)).arrayBuffer()), { container: 'raw', encoding: 'pcm_f32le', sampleRate: engine.sampleRate });
    assert.deepEqual([...native.samples], parts.map((x) => Math.fround(x)));
    // At another rate the resampler runs and the length follows the rate ratio.
    const resampled = await decodeToFloat(Buffer.from(await (await request(48000)).arrayBuffer()), { container: 'raw', encoding: 'pcm_f32le', sampleRate: 48000 });
    assert.equal(resampled.samples.length, Math.round((parts.length * 48000) / engine.sampleRate));
  });
  test('volume scales the level; speed changes the duration', async () => {
    const measure = async (generation_config: Record<string, number>) => {
      const format = { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 } as const;
      const response = await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: TRANSCRIPT, output_format: format, generation_config }));
      const decoded = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'raw', encoding: 'pcm_f32le', sampleRate: 24000 });
      return { level: rms(decoded.samples), seconds: decoded.samples.length / 24000 };
    };
    const normal = await measure({});
    const quiet = await measure({ volume: 0.5 });
    const fast = await measure({ speed: 1.5 });
    assert.ok(Math.abs(quiet.level / normal.level - 0.5) < 0.02, `level ratio ${quiet.level / normal.level}`);
    assert.ok(fast.seconds < normal.seconds * 0.8, `fast ${fast.seconds} vs ${normal.seconds}`);
  });
});
