/** @module audio/wav.test — WAV header layouts and a parser that must reject garbage with plain Errors. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Encoding } from './format.js';
import { parseWav, wavHeader } from './wav.js';

const CASES: { encoding: Encoding; format: number; bits: number; len: number }[] = [
  { encoding: 'pcm_s16le', format: 1, bits: 16, len: 44 },
  { encoding: 'pcm_f32le', format: 3, bits: 32, len: 58 },
  { encoding: 'pcm_alaw', format: 6, bits: 8, len: 58 },
  { encoding: 'pcm_mulaw', format: 7, bits: 8, len: 58 },
];

const id = (b: Buffer, at: number): string => b.toString('latin1', at, at + 4);

/** Asserts `fn` throws a plain Error (not a RangeError/TypeError leaking from a bad read). */
function throwsPlainError(fn: () => unknown, what: string): void {
  try {
    fn();
  } catch (err) {
    assert.equal((err as Error).constructor, Error, `${what}: ${String(err)}`);
    return;
  }
  assert.fail(`${what}: did not throw`);
}

function chunk(name: string, body: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.write(name, 0, 'latin1');
  h.writeUInt32LE(body.length, 4);
  return Buffer.concat([h, body, body.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

describe('wavHeader', () => {
  for (const c of CASES) {
    it(`writes a correct ${c.encoding} header`, () => {
      const h = wavHeader({ sampleRate: 22050, encoding: c.encoding, dataBytes: 1000 });
      assert.equal(h.length, c.len);
      assert.equal(id(h, 0), 'RIFF');
      assert.equal(h.readUInt32LE(4), c.len - 8 + 1000);
      assert.equal(id(h, 8), 'WAVE');
      assert.equal(id(h, 12), 'fmt ');
      const fmtSize = h.readUInt32LE(16);
      assert.equal(fmtSize, c.format === 1 ? 16 : 18);
      assert.equal(h.readUInt16LE(20), c.format);
      assert.equal(h.readUInt16LE(22), 1, 'mono');
      assert.equal(h.readUInt32LE(24), 22050);
      assert.equal(h.readUInt32LE(28), (22050 * c.bits) / 8, 'byte rate');
      assert.equal(h.readUInt16LE(32), c.bits / 8, 'block align');
      assert.equal(h.readUInt16LE(34), c.bits);
      if (c.format !== 1) {
        assert.equal(h.readUInt16LE(36), 0, 'cbSize');
        assert.equal(id(h, 38), 'fact');
        assert.equal(h.readUInt32LE(42), 4);
        assert.equal(h.readUInt32LE(46), 1000 / (c.bits / 8), 'fact sample count');
      }
      assert.equal(id(h, c.len - 8), 'data');
      assert.equal(h.readUInt32LE(c.len - 4), 1000);

      const parsed = parseWav(Buffer.concat([h, Buffer.alloc(1000, 7)]));
      assert.deepEqual(
        { ...parsed, data: parsed.data.length },
        { format: c.format, channels: 1, sampleRate: 22050, bitsPerSample: c.bits, data: 1000 },
      );
    });
  }

  it('uses 0xFFFFFFFF sizes when streaming, which parseWav reads to the end', () => {
    for (const c of CASES) {
      const h = wavHeader({ sampleRate: 8000, encoding: c.encoding });
      assert.equal(h.readUInt32LE(4), 0xffffffff);
      assert.equal(h.readUInt32LE(c.len - 4), 0xffffffff);
      if (c.format !== 1) assert.equal(h.readUInt32LE(46), 0xffffffff);
      const parsed = parseWav(Buffer.concat([h, Buffer.alloc(123, 1)]));
      assert.equal(parsed.data.length, 123);
      assert.equal(parsed.format, c.format);
    }
  });

  it('rejects impossible parameters', () => {
    assert.throws(() => wavHeader({ sampleRate: 0, encoding: 'pcm_s16le' }), RangeError);
    assert.throws(() => wavHeader({ sampleRate: 8000, encoding: 'pcm_s16le', dataBytes: -1 }), RangeError);
    assert.throws(() => wavHeader({ sampleRate: 8000, encoding: 'pcm_s16le', dataBytes: 2 ** 32 }), RangeError);
    assert.throws(() => wavHeader({ sampleRate: 8000, encoding: 'opus' as Encoding }), /unknown encoding/);
  });
});

describe('parseWav', () => {
  const fmt16 = Buffer.alloc(16);
  fmt16.writeUInt16LE(1, 0);
  fmt16.writeUInt16LE(2, 2);
  fmt16.writeUInt32LE(44100, 4);
  fmt16.writeUInt32LE(44100 * 4, 8);
  fmt16.writeUInt16LE(4, 12);
  fmt16.writeUInt16LE(16, 14);
  const riff = (...chunks: Buffer[]): Buffer => {
    const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), ...chunks]);
    const h = Buffer.alloc(8);
    h.write('RIFF', 0, 'latin1');
    h.writeUInt32LE(body.length, 4);
    return Buffer.concat([h, body]);
  };

  it('skips unknown and odd-sized chunks, honouring RIFF padding', () => {
    const wav = riff(chunk('LIST', Buffer.from('abc')), chunk('fmt ', fmt16), chunk('junk', Buffer.alloc(5)), chunk('data', Buffer.from([1, 2, 3, 4])));
    const p = parseWav(wav);
    assert.deepEqual([p.format, p.channels, p.sampleRate, p.bitsPerSample], [1, 2, 44100, 16]);
    assert.deepEqual([...p.data], [1, 2, 3, 4]);
  });

  it('reads the real format tag of WAVE_FORMAT_EXTENSIBLE files', () => {
    const ext = Buffer.alloc(40);
    fmt16.copy(ext);
    ext.writeUInt16LE(0xfffe, 0);
    ext.writeUInt16LE(22, 16);
    ext.writeUInt16LE(3, 24); // KSDATAFORMAT_SUBTYPE_IEEE_FLOAT starts with 0x0003
    assert.equal(parseWav(riff(chunk('fmt ', ext), chunk('data', Buffer.alloc(8)))).format, 3);
  });

  it('takes the rest of the buffer when the data size runs past the end', () => {
    const wav = riff(chunk('fmt ', fmt16), chunk('data', Buffer.alloc(100)));
    assert.equal(parseWav(wav.subarray(0, wav.length - 40)).data.length, 60);
  });

  it('rejects malformed files with an Error', () => {
    throwsPlainError(() => parseWav(Buffer.alloc(0)), 'empty');
    throwsPlainError(() => parseWav(Buffer.from('RIFF\0\0\0\0WAVX')), 'bad form type');
    throwsPlainError(() => parseWav(Buffer.from('ID3\x04 an mp3 pretending')), 'not riff');
    throwsPlainError(() => parseWav(riff(chunk('data', Buffer.alloc(4)), chunk('fmt ', fmt16))), 'data before fmt');
    throwsPlainError(() => parseWav(riff(chunk('fmt ', fmt16))), 'no data');
    throwsPlainError(() => parseWav(riff(chunk('data', Buffer.alloc(4)))), 'no fmt');
    throwsPlainError(() => parseWav(riff(chunk('fmt ', fmt16.subarray(0, 14)), chunk('data', Buffer.alloc(4)))), 'short fmt');
    const zeroRate = Buffer.from(fmt16);
    zeroRate.writeUInt32LE(0, 4);
    throwsPlainError(() => parseWav(riff(chunk('fmt ', zeroRate), chunk('data', Buffer.alloc(4)))), 'zero rate');
    throwsPlainError(() => parseWav('RIFF' as unknown as Buffer), 'not a buffer');
  });

  it('never crashes on any truncation or random corruption of a valid file', () => {
    const good = Buffer.concat([wavHeader({ sampleRate: 8000, encoding: 'pcm_mulaw', dataBytes: 16 }), Buffer.alloc(16)]);
    for (let n = 0; n < good.length; n++) {
      const prefix = good.subarray(0, n);
      if (n < 58) throwsPlainError(() => parseWav(prefix), `prefix ${n}`);
      else assert.equal(parseWav(prefix).data.length, n - 58);
    }
    let seed = 42;
    const rand = (k: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % k;
    };
    for (let trial = 0; trial < 3000; trial++) {
      const bad = Buffer.from(good);
      for (let k = rand(4) + 1; k > 0; k--) bad[rand(bad.length)] = rand(256);
      try {
        const p = parseWav(bad.subarray(0, rand(bad.length + 1)));
        assert.ok(p.data.length <= bad.length);
      } catch (err) {
        assert.equal((err as Error).constructor, Error, String(err));
      }
    }
  });
});
