/**
 * @module audio/mp3.test — the sample-rate × bit-rate rules are checked against what LAME actually
 * writes in its frame headers, and encoded streams are decoded back with mpg123.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMp3Encoder } from 'wasm-media-encoders';
import { decodeToFloat } from './decode.js';
import { createMp3Stream, defaultMp3BitRate, MP3_SAMPLE_RATES, mp3BitRateProblem, mp3BitRates } from './mp3.js';

const KBPS: Record<'1' | '2', number[]> = {
  '1': [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** Walks MPEG audio frames, returning each distinct "sampleRate/bitRate" seen (throws on lost sync). */
function frameFormats(b: Uint8Array): Set<string> {
  const seen = new Set<string>();
  let pos = 0;
  while (pos + 4 <= b.length) {
    assert.ok(b[pos] === 0xff && (b[pos + 1] & 0xe0) === 0xe0, `frame sync at ${pos}`);
    const version = (b[pos + 1] >> 3) & 3;
    assert.equal((b[pos + 1] >> 1) & 3, 1, 'layer III');
    const rate = RATES[version][(b[pos + 2] >> 2) & 3];
    const kbps = KBPS[version === 3 ? '1' : '2'][b[pos + 2] >> 4];
    const padding = (b[pos + 2] >> 1) & 1;
    seen.add(`${rate}/${kbps * 1000}`);
    pos += Math.floor(((version === 3 ? 144 : 72) * kbps * 1000) / rate) + padding;
  }
  assert.equal(pos, b.length, 'frames tile the stream exactly');
  return seen;
}

function sine(freq: number, rate: number, n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin((2 * Math.PI * freq * i) / rate));
}

function join(parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

const ENCODER_KBPS = [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];

describe('mp3BitRateProblem', () => {
  it('refuses exactly the pairs LAME would not honour (requested grid)', () => {
    const refused: string[] = [];
    for (const rate of [8000, 16000, 22050, 24000, 44100, 48000]) {
      for (const bitRate of [32000, 64000, 96000, 128000, 192000, 256000, 320000]) {
        if (mp3BitRateProblem(rate, bitRate)) refused.push(`${rate}/${bitRate / 1000}`);
      }
    }
    assert.deepEqual(refused, [
      ...['96', '128', '192', '256', '320'].map((k) => `8000/${k}`),
      ...[16000, 22050, 24000].flatMap((r) => ['192', '256', '320'].map((k) => `${r}/${k}`)),
    ]);
  });

  it('explains the refusal', () => {
    assert.equal(mp3BitRateProblem(8000, 128000), 'mp3 at 8000 Hz supports bit rates up to 64000; 128000 was requested');
    assert.equal(mp3BitRateProblem(24000, 320000), 'mp3 at 24000 Hz supports bit rates up to 160000; 320000 was requested');
    assert.equal(mp3BitRateProblem(44100, 16000), 'mp3 at 44100 Hz supports bit rates down to 32000; 16000 was requested');
    assert.match(mp3BitRateProblem(44100, 56000) ?? '', /supports bit rates 32000, 40000, 48000, 64000.*56000 was requested/);
    assert.match(mp3BitRateProblem(16000, 127000) ?? '', /127000 was requested/);
    assert.match(mp3BitRateProblem(96000, 128000) ?? '', /does not support a sample rate of 96000 Hz/);
    assert.match(mp3BitRateProblem(22000, 64000) ?? '', /sample rate/);
  });

  it('agrees with the encoder’s frame headers for every rate and bit rate it accepts', async () => {
    for (const rate of MP3_SAMPLE_RATES) {
      const input = sine(440, rate, Math.round(rate * 0.1));
      for (const kbps of ENCODER_KBPS) {
        const bitRate = kbps * 1000;
        const problem = mp3BitRateProblem(rate, bitRate);
        let formats: Set<string>;
        if (problem === null) {
          const s = await createMp3Stream(rate, bitRate);
          formats = frameFormats(join([s.encode(input), s.flush()]));
          assert.deepEqual([...formats], [`${rate}/${bitRate}`], `${rate} Hz @ ${kbps} kbps`);
        } else {
          // Show LAME really changes the pair (same configuration as createMp3Stream, unchecked).
          const raw = await createMp3Encoder();
          raw.configure({ channels: 1, sampleRate: rate, outputSampleRate: rate as 8000, bitrate: kbps as 8 });
          formats = frameFormats(join([raw.encode([input]).slice(), raw.finalize().slice()]));
          assert.ok(!formats.has(`${rate}/${bitRate}`), `${rate} Hz @ ${kbps} kbps was refused but LAME honours it`);
        }
      }
    }
  });

  it('lists the honoured bit rates and picks a default among them', () => {
    assert.deepEqual(mp3BitRates(8000), [8000, 16000, 24000, 32000, 40000, 48000, 64000]);
    assert.equal(mp3BitRates(44100)[0], 32000);
    assert.deepEqual(mp3BitRates(96000), []);
    for (const rate of MP3_SAMPLE_RATES) assert.equal(mp3BitRateProblem(rate, defaultMp3BitRate(rate)), null);
    assert.equal(defaultMp3BitRate(8000), 64000);
    assert.equal(defaultMp3BitRate(48000), 128000);
    assert.throws(() => defaultMp3BitRate(96000), RangeError);
  });
});

describe('createMp3Stream', () => {
  it('refuses unsupported pairs up front', async () => {
    await assert.rejects(createMp3Stream(8000, 128000), { name: 'RangeError', message: /up to 64000/ });
  });

  for (const [rate, bitRate] of [
    [8000, 32000],
    [22050, 64000],
    [48000, 320000],
  ]) {
    it(`streams chunked audio that decodes at ${rate} Hz with pitch and level intact`, async () => {
      const input = sine(440, rate, rate);
      const s = await createMp3Stream(rate, bitRate);
      const parts: Uint8Array[] = [];
      for (let at = 0; at < input.length; at += 777) parts.push(s.encode(input.subarray(at, at + 777)));
      parts.push(s.encode(new Float32Array(0)), s.flush());
      assert.equal(s.flush().length, 0);
      assert.throws(() => s.encode(input), /flushed/);
      const bytes = join(parts);
      // CBR: one second of audio is bitRate/8 bytes, give or take a few frames of priming/padding.
      const frameBytes = ((rate >= 32000 ? 144 : 72) * bitRate) / rate;
      assert.ok(Math.abs(bytes.length - bitRate / 8) <= 3 * frameBytes, `${bytes.length} bytes`);
      const out = await decodeToFloat(bytes, { container: 'mp3', sampleRate: rate, bitRate });
      assert.equal(out.sampleRate, rate);
      assert.ok(out.samples.length >= rate, `${out.samples.length} samples`);
      const mid = out.samples.subarray(Math.round(rate * 0.2), Math.round(rate * 0.8));
      let crossings = 0;
      let sum = 0;
      for (let i = 1; i < mid.length; i++) {
        if (mid[i - 1] < 0 !== mid[i] < 0) crossings++;
        sum += mid[i] * mid[i];
      }
      const expected = 2 * 440 * (mid.length / rate);
      assert.ok(Math.abs(crossings - expected) <= 4, `zero crossings ${crossings}, expected ~${expected}`);
      const level = Math.sqrt(sum / mid.length);
      assert.ok(Math.abs(level - 0.354) < 0.03, `rms ${level}`);
    });
  }
});
