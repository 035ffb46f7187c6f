/**
 * @module audio/opus.test — Ogg Opus streams decoded back with ogg-opus-decoder (a client's view):
 * length, pitch, level and timing of a tone at every rate and bit rate; the pages' CRCs, flags and
 * granule positions; a streamed output cut at its page boundaries; an empty stream; the rules.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeToFloat, rms } from './decode.js';
import { OGG_BOS, OGG_EOS, readOggPages } from './ogg.js';
import { createOggOpusStream, DEFAULT_OPUS_BIT_RATE, OPUS_SAMPLE_RATES, opusFormatProblem, type OggOpusOptions } from './opus.js';

function sine(freq: number, rate: number, n: number, amp = 0.5): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => amp * Math.sin((2 * Math.PI * freq * i) / rate));
}

async function encodeChunks(rate: number, bitRate: number, input: Float32Array, chunk: number, options: OggOpusOptions = {}) {
  const stream = await createOggOpusStream(rate, bitRate, options);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < input.length; at += chunk) parts.push(stream.encode(input.subarray(at, at + chunk)));
  parts.push(stream.flush());
  return { stream, parts, bytes: Buffer.concat(parts) };
}

async function decode(bytes: Uint8Array) {
  return decodeToFloat(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { container: 'opus', sampleRate: 48000 });
}

/** Normalised correlation of two equally long signals (1 = same shape). */
function correlation(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

/** Checks the decoded tone: length, then pitch, level and alignment against the ideal at 48 kHz. */
function checkTone(samples: Float32Array, inputLength: number, rate: number, label: string) {
  const expected = (inputLength * 48000) / rate;
  // Pre-skip and the end granule are applied by the decoder: the length is the input's exactly.
  assert.equal(samples.length, expected, `${label}: decoded length`);
  const ideal = sine(440, 48000, expected);
  const a = Math.round(expected * 0.1);
  const b = Math.round(expected * 0.9);
  const mid = samples.subarray(a, b);
  let crossings = 0;
  for (let i = 1; i < mid.length; i++) if (mid[i - 1] < 0 !== mid[i] < 0) crossings++;
  const expectedCrossings = 2 * 440 * (mid.length / 48000);
  assert.ok(Math.abs(crossings - expectedCrossings) <= 4, `${label}: zero crossings ${crossings}, expected ~${expectedCrossings}`);
  assert.ok(Math.abs(rms(mid) - 0.354) < 0.03, `${label}: rms ${rms(mid)}`);
  // Lag 0: the pre-skip in the OpusHead is the encoder's real delay.
  const c = correlation(ideal.subarray(a, b), mid);
  assert.ok(c > 0.95, `${label}: correlation with the input ${c.toFixed(3)}`);
}

describe('opusFormatProblem', () => {
  it('accepts libopus’s input rates and bit rates from 6 to 256 kbit/s', () => {
    for (const rate of OPUS_SAMPLE_RATES) {
      for (const bitRate of [6000, 32000, 64000, 96000, 128000, 192000, 256000]) assert.equal(opusFormatProblem(rate, bitRate), null);
    }
    assert.equal(opusFormatProblem(48000, DEFAULT_OPUS_BIT_RATE), null);
  });

  it('explains each refusal', () => {
    assert.equal(opusFormatProblem(44100, 64000), 'opus does not support a sample rate of 44100 Hz; use one of 8000, 12000, 16000, 24000, 48000');
    assert.match(opusFormatProblem(22050, 64000) ?? '', /sample rate of 22050 Hz/);
    assert.equal(opusFormatProblem(48000, 320000), 'opus supports bit rates from 6000 to 256000; 320000 was requested');
    assert.match(opusFormatProblem(16000, 5000) ?? '', /from 6000 to 256000; 5000 was requested/);
    assert.match(opusFormatProblem(16000, 64000.5) ?? '', /64000.5 was requested/);
  });
});

describe('createOggOpusStream', () => {
  it('refuses unsupported pairs up front', async () => {
    await assert.rejects(createOggOpusStream(44100, 64000), { name: 'RangeError', message: /sample rate of 44100 Hz/ });
    await assert.rejects(createOggOpusStream(48000, 512000), { name: 'RangeError', message: /from 6000 to 256000/ });
  });

  for (const rate of OPUS_SAMPLE_RATES) {
    it(`${rate} Hz: a tone decodes at its length, pitch, level and timing; the headers describe it`, async () => {
      const input = sine(440, rate, rate + 777);
      const { stream, bytes } = await encodeChunks(rate, 64000, input, 1111);
      const pages = readOggPages(bytes); // throws on any bad CRC
      const head = Buffer.from(pages[0].packets[0]);
      assert.equal(head.toString('latin1', 0, 8), 'OpusHead');
      assert.equal(head[9], 1, 'mono');
      assert.equal(head.readUInt16LE(10), stream.preSkip);
      assert.equal(stream.preSkip, 312, 'libopus’s lookahead: 6.5 ms at 48 kHz');
      assert.equal(head.readUInt32LE(12), rate, 'input sample rate');
      const out = await decode(bytes);
      assert.equal(out.sampleRate, 48000);
      checkTone(out.samples, input.length, rate, `${rate} Hz`);
    });
  }

  for (const bitRate of [32000, 64000, 96000, 128000, 192000]) {
    it(`${bitRate / 1000} kbit/s: decodes, at about that bit rate`, async () => {
      const rate = 48000;
      // A tone with some noise: a pure tone needs far less than 192 kbit/s even in VBR.
      let seed = 1;
      const input = sine(440, rate, rate * 2).map((x) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return x + 0.05 * (seed / 0x7fffffff - 0.5);
      });
      const { bytes } = await encodeChunks(rate, bitRate, input, 4800);
      const audioBytes = readOggPages(bytes)
        .slice(2)
        .reduce((n, p) => n + p.packets.reduce((m, x) => m + x.length, 0), 0);
      const measured = (audioBytes * 8) / 2;
      assert.ok(Math.abs(measured - bitRate) < bitRate * 0.1, `${measured} bit/s for a target of ${bitRate}`);
      const out = await decode(bytes);
      assert.equal(out.samples.length, input.length);
      const mid = out.samples.subarray(9600, 86400);
      assert.ok(correlation(sine(440, rate, rate * 2).subarray(9600, 86400), mid) > 0.95);
    });
  }

  it('pages: BOS head, tags, then audio; one serial, numbered in order; granules to the exact end', async () => {
    const rate = 16000;
    const input = sine(440, rate, 3 * rate + 5);
    const { stream, bytes } = await encodeChunks(rate, 32000, input, 3000, { serial: 0x01020304 });
    const pages = readOggPages(bytes);
    assert.equal(pages[0].flags, OGG_BOS);
    assert.deepEqual(pages[0].granule, 0n);
    assert.equal(Buffer.from(pages[1].packets[0]).toString('latin1', 0, 8), 'OpusTags');
    assert.deepEqual(pages[1].granule, 0n);
    assert.equal(pages[1].packets.length, 1);
    assert.ok(pages.every((p, i) => p.serial === 0x01020304 && p.sequence === i));
    assert.ok(pages.slice(0, -1).every((p) => (p.flags & OGG_EOS) === 0));
    const last = pages[pages.length - 1];
    assert.equal(last.flags, OGG_EOS);
    assert.equal(last.granule, BigInt(stream.preSkip + input.length * 3));
    for (let i = 3; i < pages.length; i++) assert.ok(pages[i].granule >= pages[i - 1].granule);
    // Not streaming: audio pages hold up to a second (50 packets of 20 ms), each packet 960 at 48 kHz.
    const audio = pages.slice(2);
    assert.ok(audio.slice(0, -1).every((p) => p.packets.length === 50));
    let packets = 0;
    for (const p of audio.slice(0, -1)) {
      packets += p.packets.length;
      assert.equal(p.granule, BigInt(packets * 960));
    }
    packets += last.packets.length;
    assert.ok(packets * 960 >= stream.preSkip + input.length * 3, 'the coded audio covers the delay');
    assert.ok((packets - 1) * 960 < stream.preSkip + input.length * 3, 'and no more than one frame beyond');
  });

  it('streaming: every encode() gives whole pages of the frames it completed; any prefix of them decodes', async () => {
    const rate = 24000;
    const input = sine(440, rate, rate);
    const { parts, bytes } = await encodeChunks(rate, 64000, input, 1500, { streaming: true });
    // 1500 samples = 62.5 ms: every call completes three or four 20 ms frames, at once.
    let coded = 0;
    let buffered = 0;
    for (let i = 0; i < parts.length - 1; i++) {
      const pages = readOggPages(parts[i]); // each piece on its own is whole pages
      const audio = i === 0 ? pages.slice(2) : pages;
      assert.equal(audio.length, 1, `call ${i}: one page`);
      buffered += 1500;
      const frames = Math.floor(buffered / 480);
      assert.equal(audio[0].packets.length, frames, `call ${i}: every complete frame`);
      buffered -= frames * 480;
      coded += frames;
      assert.equal(audio[0].granule, BigInt(coded * 960));
    }
    // A client that has the first pieces only (cut at page boundaries) can play them.
    for (const k of [1, 3, 8]) {
      const prefix = Buffer.concat(parts.slice(0, k));
      const out = await decode(prefix);
      const frames = readOggPages(prefix).slice(2).reduce((n, p) => n + p.packets.length, 0);
      assert.equal(out.samples.length, frames * 960 - 312, `first ${k} pieces`);
      assert.ok(rms(out.samples.subarray(960)) > 0.3, `first ${k} pieces: rms ${rms(out.samples.subarray(960))}`);
    }
    checkTone((await decode(bytes)).samples, input.length, rate, 'streamed');
  });

  it('an empty stream is a valid one: headers and an end-of-stream page of one silent packet', async () => {
    for (const streaming of [false, true]) {
      const stream = await createOggOpusStream(48000, 64000, { streaming });
      const bytes = stream.flush();
      const pages = readOggPages(bytes);
      assert.equal(pages.length, 3);
      assert.equal(pages[2].flags, OGG_EOS);
      assert.equal(pages[2].granule, BigInt(stream.preSkip));
      // Its end granule says 0 samples. ogg-opus-decoder applies an end granule only from a
      // stream's second audio page on, so here it plays the packet less the pre-skip: silence.
      const out = await decode(bytes);
      assert.ok(out.samples.length <= 960 - stream.preSkip, `${out.samples.length} samples`);
      assert.ok(rms(out.samples) < 1e-3);
      // An encode() with no samples still opens the stream with its headers.
      const other = await createOggOpusStream(8000, 32000, { streaming });
      assert.equal(readOggPages(other.encode(new Float32Array(0))).length, 2);
      assert.equal(readOggPages(other.flush()).length, 1);
    }
  });

  it('a stream is finished by flush() or close()', async () => {
    const stream = await createOggOpusStream(16000, 64000);
    stream.encode(sine(440, 16000, 500));
    assert.ok(stream.flush().length > 0);
    assert.equal(stream.flush().length, 0);
    assert.throws(() => stream.encode(new Float32Array(10)), /finished/);
    const closed = await createOggOpusStream(16000, 64000);
    closed.close();
    closed.close();
    assert.throws(() => closed.encode(new Float32Array(10)), /finished/);
    assert.equal(closed.flush().length, 0);
  });

  it('many streams open at once on one thread stay independent', async () => {
    const input = sine(440, 16000, 4000);
    const alone = (await encodeChunks(16000, 64000, input, 320, { serial: 5 })).bytes;
    const streams = await Promise.all(Array.from({ length: 300 }, () => createOggOpusStream(16000, 64000, { serial: 5 })));
    const parts: Uint8Array[][] = streams.map(() => []);
    for (let at = 0; at < input.length; at += 320) streams.forEach((s, i) => parts[i].push(s.encode(input.subarray(at, at + 320))));
    streams.forEach((s, i) => parts[i].push(s.flush()));
    assert.ok(parts.every((p) => Buffer.concat(p).equals(alone)));
  });
});
