/**
 * @module audio/encoder-thread.test
 * MP3 and Ogg Opus on the encoder threads: the same bytes as encoding in this
 * thread, for streams whose calls interleave, the two codecs side by side; a
 * closed stream is gone from the thread.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openMp3ThreadStream, openOpusThreadStream, type ThreadStream } from './encoder-thread.js';
import { createMp3Stream } from './mp3.js';
import { createOggOpusStream } from './opus.js';

function tone(hz: number, rate: number, seconds: number): Float32Array {
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => 0.4 * Math.sin((2 * Math.PI * hz * i) / rate));
}

function join(parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

/**
 * Feeds each stream its input in chunks of 1,000 samples, every stream's next chunk in flight at
 * once (as under concurrent requests), then flushes them; returns each stream's bytes in order.
 */
async function interleaved(streams: ThreadStream[], inputs: Float32Array[]): Promise<Uint8Array[][]> {
  const got: Uint8Array[][] = streams.map(() => []);
  const longest = Math.max(...inputs.map((x) => x.length));
  for (let at = 0; at < longest; at += 1000) {
    const answers = await Promise.all(streams.map((s, i) => (at < inputs[i].length ? s.encode(inputs[i].subarray(at, at + 1000)) : null)));
    answers.forEach((bytes, i) => bytes && got[i].push(bytes));
  }
  for (let i = 0; i < streams.length; i++) got[i].push(await streams[i].flush());
  return got;
}

describe('openMp3ThreadStream', () => {
  it('gives the bytes LAME gives in this thread, for three streams whose chunks interleave', { timeout: 30_000 }, async () => {
    const inputs = [tone(220, 44100, 1.3), tone(440, 44100, 0.7), tone(660, 24000, 1)];
    const rates = [44100, 44100, 24000];
    const expected: Buffer[] = [];
    for (let i = 0; i < inputs.length; i++) {
      const local = await createMp3Stream(rates[i], 64000);
      const parts: Uint8Array[] = [];
      for (let at = 0; at < inputs[i].length; at += 1000) parts.push(local.encode(inputs[i].subarray(at, at + 1000)));
      parts.push(local.flush());
      expected.push(join(parts));
    }
    const streams = await Promise.all(rates.map((rate) => openMp3ThreadStream(rate, 64000)));
    const got = await interleaved(streams, inputs);
    for (let i = 0; i < streams.length; i++) {
      assert.ok(expected[i].length > 1000, `stream ${i} made frames`);
      assert.deepEqual(join(got[i]), expected[i], `stream ${i}`);
    }
  });

  it('a closed stream is dropped on the thread; an impossible format is refused', { timeout: 30_000 }, async () => {
    const s = await openMp3ThreadStream(44100, 128000);
    await s.encode(tone(300, 44100, 0.2));
    s.close();
    await assert.rejects(s.encode(tone(300, 44100, 0.1)), /no mp3 stream/);
    await assert.rejects(openMp3ThreadStream(8000, 128000), /up to 64000/);
  });
});

describe('openOpusThreadStream', () => {
  it('gives the bytes libopus gives in this thread, for Opus and MP3 streams whose chunks interleave', { timeout: 30_000 }, async () => {
    const inputs = [tone(220, 48000, 1.3), tone(440, 16000, 0.7), tone(660, 44100, 1)];
    const expected: Buffer[] = [];
    for (const [i, rate] of [48000, 16000].entries()) {
      const local = await createOggOpusStream(rate, 64000, { streaming: true, serial: 100 + i });
      const parts: Uint8Array[] = [];
      for (let at = 0; at < inputs[i].length; at += 1000) parts.push(local.encode(inputs[i].subarray(at, at + 1000)));
      parts.push(local.flush());
      expected.push(join(parts));
    }
    const streams = await Promise.all([
      openOpusThreadStream(48000, 64000, { streaming: true, serial: 100 }),
      openOpusThreadStream(16000, 64000, { streaming: true, serial: 101 }),
      openMp3ThreadStream(44100, 64000),
    ]);
    const got = await interleaved(streams, inputs);
    for (let i = 0; i < 2; i++) {
      assert.ok(expected[i].length > 1000, `stream ${i} made pages`);
      assert.deepEqual(join(got[i]), expected[i], `stream ${i}`);
    }
    assert.ok(join(got[2]).length > 1000, 'the mp3 stream beside them made frames');
  });

  it('a closed stream is dropped on the thread; an impossible format is refused', { timeout: 30_000 }, async () => {
    const s = await openOpusThreadStream(24000, 96000, { streaming: false });
    await s.encode(tone(300, 24000, 0.2));
    s.close();
    await assert.rejects(s.encode(tone(300, 24000, 0.1)), /no opus stream/);
    await assert.rejects(s.flush(), /no opus stream/);
    await assert.rejects(openOpusThreadStream(44100, 64000, { streaming: true }), /sample rate of 44100 Hz/);
    await assert.rejects(openOpusThreadStream(48000, 300000, { streaming: true }), /from 6000 to 256000/);
  });
});
