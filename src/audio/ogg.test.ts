/**
 * @module audio/ogg.test — the page CRC against the published check value and a bit-by-bit
 * reference, page layout and lacing, and the reader's refusal of damaged pages.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OGG_BOS, OGG_EOS, oggCrc32, OggWriter, readOggPages } from './ogg.js';

/** The CRC computed one bit at a time, straight from the definition (RFC 3533, section 6). */
function bitwiseCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

function filled(length: number, value: number): Uint8Array {
  return new Uint8Array(length).fill(value);
}

describe('oggCrc32', () => {
  it('is CRC-32/POSIX without its final inversion (check value of "123456789")', () => {
    // CRC-32/POSIX: poly 0x04c11db7, init 0, unreflected, xorout 0xffffffff, check 0x765e7680.
    assert.equal(oggCrc32(Buffer.from('123456789')), (0x765e7680 ^ 0xffffffff) >>> 0);
  });

  it('agrees with the bit-by-bit definition', () => {
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 0xff);
    for (const n of [0, 1, 2, 27, 255, 1000]) assert.equal(oggCrc32(bytes.subarray(0, n)), bitwiseCrc(bytes.subarray(0, n)));
  });
});

describe('OggWriter', () => {
  it('lays out a page: header fields, lacing (0 ends a packet of 255 bytes) and the CRC', () => {
    const ogg = new OggWriter(0xdeadbeef);
    const packets = [new Uint8Array(0), filled(255, 1), filled(300, 2)];
    const page = ogg.page({ packets, granule: 123456789012n, flags: OGG_BOS });
    assert.equal(Buffer.from(page.subarray(0, 4)).toString('latin1'), 'OggS');
    assert.equal(page[26], 5);
    assert.deepEqual([...page.subarray(27, 32)], [0, 255, 0, 255, 45]);
    assert.equal(page.length, 27 + 5 + 555);
    const stored = new DataView(page.buffer).getUint32(22, true);
    const zeroed = page.slice();
    zeroed.fill(0, 22, 26);
    assert.equal(stored, bitwiseCrc(zeroed));

    const second = ogg.page({ packets: [filled(10, 3)], granule: 9n, flags: OGG_EOS });
    const read = readOggPages(Buffer.concat([page, second]));
    assert.deepEqual(
      read.map((p) => [p.serial, p.sequence, p.granule, p.flags, p.packets.map((x) => x.length)]),
      [
        [0xdeadbeef, 0, 123456789012n, OGG_BOS, [0, 255, 300]],
        [0xdeadbeef, 1, 9n, OGG_EOS, [10]],
      ],
    );
    assert.deepEqual([...read[1].packets[0]], [...filled(10, 3)]);
  });

  it('refuses a page of more than 255 lacing values and a bad serial', () => {
    const ogg = new OggWriter(1);
    assert.throws(() => ogg.page({ packets: [filled(255 * 255, 0)], granule: 0n, flags: 0 }), /255 lacing values; 256/);
    assert.doesNotThrow(() => ogg.page({ packets: [filled(255 * 254, 0)], granule: 0n, flags: 0 }));
    assert.throws(() => new OggWriter(2 ** 32), RangeError);
  });
});

describe('readOggPages', () => {
  it('refuses a flipped bit, a page cut short and bytes that are not Ogg', () => {
    const page = new OggWriter(7).page({ packets: [filled(40, 9)], granule: 0n, flags: 0 });
    const damaged = page.slice();
    damaged[50] ^= 0x10;
    assert.throws(() => readOggPages(damaged), /fails its CRC/);
    assert.throws(() => readOggPages(page.subarray(0, page.length - 1)), /cut short/);
    assert.throws(() => readOggPages(Buffer.from('RIFF....WAVEfmt and more bytes')), /capture pattern/);
    assert.equal(readOggPages(new Uint8Array(0)).length, 0);
    // Reading leaves the bytes as they were (a Buffer too), so they can be read again.
    const buffer = Buffer.from(page);
    readOggPages(buffer);
    assert.deepEqual(buffer, Buffer.from(page));
    assert.equal(readOggPages(buffer).length, 1);
  });
});
