/**
 * @module audio/g711.test — G.711 codecs. The digests below were computed from sox 14.4.2
 * (`sox -D -t raw -e signed -b 16 … -e mu-law|a-law`, dither off) over all 65536 int16 inputs and
 * all 256 codes, so these tests prove bit-exactness with sox without needing sox installed.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { alawToInt16, decodeAlaw, decodeMulaw, encodeAlaw, encodeAlawFloat, encodeMulaw, encodeMulawFloat, mulawToInt16 } from './g711.js';
import { floatToInt16 } from './pcm.js';

const SOX_MULAW_ENCODE_SHA256 = 'cd03795221187036041e2c68724ebbcc497e1844823ff4ab4ac6e61bc5948fb3';
const SOX_ALAW_ENCODE_SHA256 = '9ad77510792fe7c8192acff6bf30d3fe660e5644727b703881516fa61dbabdeb';
/** sox decode of codes 0..255 to s16le. */
const SOX_MULAW_DECODE_SHA256 = '3dab54339e520bb2c924826e3b72a917a2b612e9fd12fc867500f1d983a75827';
const SOX_ALAW_DECODE_SHA256 = 'e04788d110e58ff8c70c93b8480190d973e3b67876b6119abbaec766cc75c174';

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const le16 = (s: Int16Array): Buffer => {
  const b = Buffer.alloc(s.length * 2);
  s.forEach((v, i) => b.writeInt16LE(v, i * 2));
  return b;
};

const ALL = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

describe('G.711', () => {
  it('encodes every int16 exactly as sox does', () => {
    assert.equal(sha256(encodeMulaw(ALL)), SOX_MULAW_ENCODE_SHA256);
    assert.equal(sha256(encodeAlaw(ALL)), SOX_ALAW_ENCODE_SHA256);
  });

  it('decodes every code exactly as sox does', () => {
    assert.equal(sha256(le16(decodeMulaw(CODES))), SOX_MULAW_DECODE_SHA256);
    assert.equal(sha256(le16(decodeAlaw(CODES))), SOX_ALAW_DECODE_SHA256);
    assert.equal(mulawToInt16, decodeMulaw);
    assert.equal(alawToInt16, decodeAlaw);
  });

  it('matches well-known ITU code points', () => {
    const enc = (f: (s: Int16Array) => Uint8Array, v: number): number => f(Int16Array.of(v))[0];
    assert.equal(enc(encodeMulaw, 0), 0xff);
    assert.equal(enc(encodeMulaw, 32767), 0x80);
    assert.equal(enc(encodeMulaw, -32768), 0x00);
    assert.equal(enc(encodeAlaw, 0), 0xd5);
    assert.equal(enc(encodeAlaw, -8), 0x55);
    assert.equal(enc(encodeAlaw, 32767), 0xaa);
    assert.equal(enc(encodeAlaw, -32768), 0x2a);
    assert.deepEqual([...decodeMulaw(Uint8Array.of(0xff, 0x7f, 0x80, 0x00))], [0, 0, 32124, -32124]);
    assert.deepEqual([...decodeAlaw(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a))], [8, -8, 32256, -32256]);
  });

  it('rounds to 14/13 bits before encoding rather than truncating', () => {
    // 14-bit step is 4: 1 rounds to 0, 2 rounds up to 1 (truncation would give 0 for both).
    assert.deepEqual([...encodeMulaw(Int16Array.of(1, 2, -2, -3))], [0xff, 0xfe, 0xff, 0x7e]);
  });

  it('round-trips every int16 within the codec’s quantisation error', () => {
    for (const [name, enc, dec, maxAbs] of [
      ['mu-law', encodeMulaw, decodeMulaw, 644],
      ['A-law', encodeAlaw, decodeAlaw, 516],
    ] as const) {
      const back = dec(enc(ALL));
      for (let i = 0; i < ALL.length; i++) {
        const x = ALL[i];
        const err = Math.abs(back[i] - x);
        assert.ok(err <= maxAbs, `${name} ${x} -> ${back[i]}`);
        // Logarithmic companding: error stays under ~5% of the magnitude above the linear region.
        if (Math.abs(x) > 256) assert.ok(err <= Math.abs(x) * 0.048, `${name} ${x} -> ${back[i]}`);
      }
    }
  });

  it('re-encodes every decoded code to itself (μ-law negative zero aside)', () => {
    const mu = encodeMulaw(decodeMulaw(CODES));
    const a = encodeAlaw(decodeAlaw(CODES));
    for (let c = 0; c < 256; c++) {
      assert.equal(a[c], c, `A-law code ${c}`);
      assert.equal(mu[c], c === 0x7f ? 0xff : c, `mu-law code ${c}`);
    }
  });

  it('handles empty input', () => {
    assert.equal(encodeMulaw(new Int16Array(0)).length, 0);
    assert.equal(decodeAlaw(new Uint8Array(0)).length, 0);
  });

  it('float samples encode as their int16 form would, in one pass', () => {
    const probe = new Float32Array(2 * 65536 + 6);
    for (let k = 0; k < 65536; k++) {
      probe[2 * k] = (k - 32768) / 32767;
      probe[2 * k + 1] = Math.fround((k - 32768 + 0.5) / 32767);
    }
    probe.set([NaN, Infinity, -Infinity, 1.5, -1.5, -1], 2 * 65536);
    assert.deepEqual(encodeMulawFloat(probe), encodeMulaw(floatToInt16(probe)));
    assert.deepEqual(encodeAlawFloat(probe), encodeAlaw(floatToInt16(probe)));
  });
});
