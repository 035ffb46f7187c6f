/**
 * @module audio/encoder.test — every container/encoding the pipeline can request, encoded in chunks
 * and decoded back the way a client would, plus the resampler → encoder path the pipeline runs.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeToFloat, rms } from './decode.js';
import { createAudioEncoder, finalWavHeader } from './encoder.js';
import { encodePcm } from './pcm-encoding.js';
import { bytesPerSample, CONTENT_TYPES, type Encoding, type OutputFormat } from './format.js';
import { createResampler } from './resampler.js';
import { readOggPages } from './ogg.js';
import { parseWav } from './wav.js';

const ENCODINGS: Encoding[] = ['pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw'];

function sine(freq: number, rate: number, n: number, amp = 0.5): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => amp * Math.sin((2 * Math.PI * freq * i) / rate));
}

async function encodeAll(format: OutputFormat, input: Float32Array, chunk: number, streaming = true) {
  const enc = await createAudioEncoder(format, { streaming, totalSamples: streaming ? undefined : input.length });
  const parts: Buffer[] = [];
  const header = enc.header();
  if (header) parts.push(header);
  for (let at = 0; at < input.length; at += chunk) parts.push(await enc.encode(input.subarray(at, at + chunk)));
  parts.push(await enc.end());
  return { enc, header, bytes: Buffer.concat(parts) };
}

/** Signal-to-noise ratio of `got` against `ref`, in dB. */
function snr(ref: Float32Array, got: Float32Array): number {
  let sig = 0;
  let noise = 0;
  for (let i = 0; i < ref.length; i++) {
    sig += ref[i] * ref[i];
    noise += (ref[i] - got[i]) ** 2;
  }
  return 10 * Math.log10(sig / noise);
}

describe('bytesPerSample / CONTENT_TYPES', () => {
  it('describe each encoding and container', () => {
    assert.deepEqual(ENCODINGS.map(bytesPerSample), [2, 4, 1, 1]);
    assert.deepEqual(CONTENT_TYPES, { wav: 'audio/wav', mp3: 'audio/mpeg', opus: 'audio/ogg', raw: 'application/octet-stream', flac: 'audio/flac' });
  });
});

describe('createAudioEncoder', () => {
  const input = sine(440, 16000, 16000 + 123);
  const minSnr: Record<Encoding, number> = { pcm_s16le: 90, pcm_f32le: 140, pcm_mulaw: 35, pcm_alaw: 35 };

  for (const container of ['raw', 'wav'] as const) {
    for (const encoding of ENCODINGS) {
      it(`${container}/${encoding}: chunked output decodes back to the input`, async () => {
        const format: OutputFormat = { container, encoding, sampleRate: 16000 };
        const { enc, header, bytes } = await encodeAll(format, input, 1001);
        assert.equal(enc.contentType, CONTENT_TYPES[container]);
        assert.equal(header === null, container === 'raw');
        const dataBytes = input.length * bytesPerSample(encoding);
        assert.equal(bytes.length, (header?.length ?? 0) + dataBytes);
        // Stateless encodings: chunking must not change a single byte.
        assert.deepEqual(bytes.subarray(header?.length ?? 0), encodePcm(encoding, input));
        const out = await decodeToFloat(bytes, format);
        assert.equal(out.sampleRate, 16000);
        assert.equal(out.samples.length, input.length);
        const quality = snr(input, out.samples);
        assert.ok(quality > minSnr[encoding], `SNR ${quality.toFixed(1)} dB`);
        assert.ok(Math.abs(rms(out.samples) - rms(input)) < 0.01);
      });
    }
  }

  it('wav: streaming headers use unknown sizes, whole clips carry real ones', async () => {
    for (const encoding of ENCODINGS) {
      const format: OutputFormat = { container: 'wav', encoding, sampleRate: 8000 };
      const streamed = await createAudioEncoder(format, { streaming: true, totalSamples: 500 });
      const h = streamed.header();
      assert.ok(h);
      assert.equal(h.readUInt32LE(h.length - 4), 0xffffffff);
      const clip = await encodeAll(format, sine(300, 8000, 500), 64, false);
      const dataBytes = 500 * bytesPerSample(encoding);
      assert.deepEqual(clip.header, finalWavHeader(format, dataBytes));
      assert.equal(clip.bytes.readUInt32LE(4), clip.bytes.length - 8, 'RIFF size is file length - 8');
      assert.equal(parseWav(clip.bytes).data.length, dataBytes);
    }
  });

  it('f32 output is clipped to [-1,1] like the integer encodings', async () => {
    const enc = await createAudioEncoder({ container: 'raw', encoding: 'pcm_f32le', sampleRate: 8000 }, { streaming: true });
    const b = await enc.encode(Float32Array.of(1.02, -1.5, 0.25, NaN));
    assert.deepEqual([0, 4, 8, 12].map((o) => b.readFloatLE(o)), [1, -1, 0.25, 0]);
  });

  it('mp3: no header, bytes from encode + end decode at the requested rate', async () => {
    const format: OutputFormat = { container: 'mp3', sampleRate: 24000, bitRate: 64000 };
    const { enc, header, bytes } = await encodeAll(format, sine(440, 24000, 24000), 2048);
    assert.equal(header, null);
    assert.equal(enc.contentType, 'audio/mpeg');
    assert.equal((await enc.end()).length, 0, 'end() is idempotent');
    await assert.rejects(async () => enc.encode(new Float32Array(10)), /ended/);
    const out = await decodeToFloat(bytes, format);
    assert.equal(out.sampleRate, 24000);
    assert.ok(Math.abs(rms(out.samples.subarray(4800, 19200)) - 0.354) < 0.03);
  });

  it('mp3 without a bit rate uses a default the rate supports', async () => {
    const format: OutputFormat = { container: 'mp3', sampleRate: 8000 };
    const { bytes } = await encodeAll(format, sine(440, 8000, 8000), 4000);
    assert.equal((await decodeToFloat(bytes, format)).sampleRate, 8000);
  });

  for (const streaming of [true, false]) {
    it(`opus, ${streaming ? 'streamed' : 'whole clip'}: header pages come with the audio; it decodes at the input's length`, async () => {
      const format: OutputFormat = { container: 'opus', sampleRate: 16000, bitRate: 32000 };
      const input = sine(440, 16000, 16000 + 123);
      const enc = await createAudioEncoder(format, { streaming, totalSamples: streaming ? undefined : input.length });
      assert.equal(enc.contentType, 'audio/ogg');
      assert.equal(enc.header(), null);
      const parts: Buffer[] = [];
      for (let at = 0; at < input.length; at += 2000) parts.push(await enc.encode(input.subarray(at, at + 2000)));
      parts.push(await enc.end());
      assert.equal((await enc.end()).length, 0, 'end() is idempotent');
      await assert.rejects(async () => enc.encode(new Float32Array(10)), /ended/);
      const pages = readOggPages(parts[0]);
      assert.equal(Buffer.from(pages[0].packets[0]).toString('latin1', 0, 8), 'OpusHead', 'the first bytes are the stream’s headers');
      // Streamed, every chunk of 2000 samples (125 ms) completes frames, so its piece has audio pages
      // (the last chunk, 123 samples, completes none; end() gives the rest).
      const pieces = [...parts.slice(0, -2), parts[parts.length - 1]];
      if (streaming) assert.ok(pieces.every((p) => readOggPages(p).length > 0) && parts[parts.length - 2].length === 0);
      else assert.ok(parts.slice(0, -1).every((p, i) => i === 0 || p.length === 0), 'a clip’s pages hold a second: none before');
      const out = await decodeToFloat(Buffer.concat(parts), format);
      assert.equal(out.sampleRate, 48000);
      assert.equal(out.samples.length, input.length * 3);
      assert.ok(Math.abs(rms(out.samples.subarray(4800, 43200)) - 0.354) < 0.03);
    });
  }

  it('opus without a bit rate uses 64 kbit/s; a stream that gets no samples is still Ogg Opus', async () => {
    const enc = await createAudioEncoder({ container: 'opus', sampleRate: 48000 }, { streaming: true });
    const bytes = await enc.end();
    const pages = readOggPages(bytes);
    assert.equal(pages.length, 3);
    assert.equal(Buffer.from(pages[0].packets[0]).toString('latin1', 0, 8), 'OpusHead');
    const longer = await createAudioEncoder({ container: 'opus', sampleRate: 48000 }, { streaming: false });
    const clip = Buffer.concat([await longer.encode(sine(440, 48000, 96000)), await longer.end()]);
    const audio = readOggPages(clip).slice(2).reduce((n, p) => n + p.packets.reduce((m, x) => m + x.length, 0), 0);
    assert.ok(Math.abs((audio * 8) / 2 - 64000) < 12000, `${(audio * 8) / 2} bit/s`);
  });

  it('rejects impossible formats', async () => {
    await assert.rejects(createAudioEncoder({ container: 'opus', sampleRate: 22050, bitRate: 64000 }, { streaming: true }), /sample rate of 22050 Hz/);
    await assert.rejects(createAudioEncoder({ container: 'opus', sampleRate: 48000, bitRate: 320000 }, { streaming: false }), /from 6000 to 256000/);
    await assert.rejects(createAudioEncoder({ container: 'mp3', sampleRate: 8000, bitRate: 128000 }, { streaming: true }), /up to 64000/);
    await assert.rejects(createAudioEncoder({ container: 'wav', sampleRate: 8000 }, { streaming: true }), /needs an encoding/);
    await assert.rejects(createAudioEncoder({ container: 'raw', encoding: 'pcm_s16le', sampleRate: 0 }, { streaming: true }), RangeError);
    await assert.rejects(
      createAudioEncoder({ container: 'ogg' as 'raw', encoding: 'pcm_s16le', sampleRate: 8000 }, { streaming: true }),
      /unknown container/,
    );
    const pcm = await createAudioEncoder({ container: 'raw', encoding: 'pcm_s16le', sampleRate: 8000 }, { streaming: true });
    assert.equal((await pcm.end()).length, 0);
    assert.throws(() => pcm.encode(new Float32Array(1)), /ended/);
  });
});

describe('decodeToFloat', () => {
  it('rejects truncated raw samples and non-audio wav', async () => {
    await assert.rejects(decodeToFloat(Buffer.alloc(3), { container: 'raw', encoding: 'pcm_s16le', sampleRate: 8000 }), /whole samples/);
    await assert.rejects(decodeToFloat(Buffer.from('not a wav file at all'), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 8000 }));
    await assert.rejects(decodeToFloat(Buffer.alloc(0), { container: 'mp3', sampleRate: 8000 }));
  });

  it('computes rms', () => {
    assert.equal(rms(new Float32Array(0)), 0);
    assert.equal(rms(Float32Array.of(3, -4, 3, -4)), Math.sqrt(12.5));
  });
});

describe('pipeline: eSpeak 22050 Hz chunks → resampler → encoder', () => {
  for (const [format, minSnr] of [
    [{ container: 'wav', encoding: 'pcm_mulaw', sampleRate: 8000 }, 30],
    [{ container: 'raw', encoding: 'pcm_s16le', sampleRate: 48000 }, 60],
    [{ container: 'wav', encoding: 'pcm_alaw', sampleRate: 16000 }, 30],
  ] as const) {
    it(`${format.container}/${format.encoding} @ ${format.sampleRate}`, async () => {
      const src = sine(440, 22050, 22050);
      const rs = await createResampler(22050, format.sampleRate);
      const enc = await createAudioEncoder(format, { streaming: true });
      const parts: Buffer[] = [enc.header() ?? Buffer.alloc(0)];
      for (let at = 0; at < src.length; at += 1470) parts.push(await enc.encode(rs.process(src.subarray(at, at + 1470))));
      parts.push(await enc.encode(rs.flush()), await enc.end());
      rs.destroy();
      const out = await decodeToFloat(Buffer.concat(parts), format);
      assert.equal(out.sampleRate, format.sampleRate);
      assert.equal(out.samples.length, format.sampleRate, 'one second in, one second out');
      // Compare against an ideal sine at the output rate, away from the clip edges.
      const ideal = sine(440, format.sampleRate, format.sampleRate);
      const a = Math.round(format.sampleRate * 0.05);
      const b = format.sampleRate - a;
      const quality = snr(ideal.subarray(a, b), out.samples.subarray(a, b));
      assert.ok(quality > minSnr, `SNR ${quality.toFixed(1)} dB`);
    });
  }
  it('opus @ 24000, streamed: one second in, one second out (at 48 kHz), in time with the input', async () => {
    const format: OutputFormat = { container: 'opus', sampleRate: 24000, bitRate: 64000 };
    const src = sine(440, 22050, 22050);
    const rs = await createResampler(22050, 24000);
    const enc = await createAudioEncoder(format, { streaming: true });
    const parts: Buffer[] = [];
    for (let at = 0; at < src.length; at += 1470) parts.push(await enc.encode(rs.process(src.subarray(at, at + 1470))));
    parts.push(await enc.encode(rs.flush()), await enc.end());
    rs.destroy();
    const out = await decodeToFloat(Buffer.concat(parts), format);
    assert.equal(out.samples.length, 48000);
    // A lossy codec: waveform SNR says little, but the decoded tone lines up with the ideal one.
    const ideal = sine(440, 48000, 48000);
    const quality = snr(ideal.subarray(2400, 45600), out.samples.subarray(2400, 45600));
    assert.ok(quality > 10, `SNR ${quality.toFixed(1)} dB`);
  });
});
