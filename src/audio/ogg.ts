/**
 * @module audio/ogg — Ogg pages (RFC 3533) for one logical stream, as Ogg Opus needs them.
 *
 * Written here rather than taken from a package: the npm registry has Ogg demuxers (codec-parser,
 * used by the test decoder) but no maintained muxer; the ones that exist are bindings to libogg's
 * native build or parts of browser recorders. A page is a 27-byte header, a lacing table and the
 * packets, with a CRC-32 over all of it; that is all this module does.
 */

/** Header-type flags of a page. */
export const OGG_CONTINUED = 0x01;
export const OGG_BOS = 0x02;
export const OGG_EOS = 0x04;

/** A page holds at most 255 lacing values; a packet of n bytes takes floor(n/255)+1 of them. */
export const OGG_MAX_SEGMENTS = 255;

/** CRC-32 as Ogg defines it: polynomial 0x04c11db7, initial value 0, not reflected, no final xor. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

export function oggCrc32(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]) & 0xff]) >>> 0;
  return crc;
}

/** Lacing values a packet takes in a page's segment table. */
export function lacingValues(packetBytes: number): number {
  return Math.floor(packetBytes / 255) + 1;
}

export interface OggPage {
  /** Whole packets; together they must fit in OGG_MAX_SEGMENTS lacing values. */
  packets: readonly Uint8Array[];
  /** Position after the last packet completed on the page (codec-defined units). */
  granule: bigint;
  flags: number;
}

/** Writes the pages of one logical bitstream, numbering them in order. */
export class OggWriter {
  private sequence = 0;

  constructor(readonly serial: number) {
    if (!Number.isInteger(serial) || serial < 0 || serial > 0xffffffff) throw new RangeError(`invalid Ogg serial ${serial}`);
  }

  /** The bytes of the next page. */
  page({ packets, granule, flags }: OggPage): Uint8Array {
    let segments = 0;
    let body = 0;
    for (const p of packets) {
      segments += lacingValues(p.length);
      body += p.length;
    }
    if (segments > OGG_MAX_SEGMENTS) throw new RangeError(`an Ogg page holds ${OGG_MAX_SEGMENTS} lacing values; ${segments} were given`);
    const page = new Uint8Array(27 + segments + body);
    const view = new DataView(page.buffer);
    page.set([0x4f, 0x67, 0x67, 0x53]); // "OggS"
    page[4] = 0; // stream structure version
    page[5] = flags;
    view.setBigInt64(6, granule, true);
    view.setUint32(14, this.serial, true);
    view.setUint32(18, this.sequence++, true);
    // bytes 22–25: the CRC, zero while it is computed
    page[26] = segments;
    let lace = 27;
    let at = 27 + segments;
    for (const p of packets) {
      for (let left = p.length; left >= 255; left -= 255) page[lace++] = 255;
      page[lace++] = p.length % 255; // a packet ending on a multiple of 255 ends with a 0
      page.set(p, at);
      at += p.length;
    }
    view.setUint32(22, oggCrc32(page), true);
    return page;
  }
}

export interface ReadPage extends OggPage {
  serial: number;
  sequence: number;
  /** Bytes of the page in the input. */
  start: number;
  end: number;
}

/**
 * Splits `bytes` into pages, checking each page's capture pattern, version and CRC, and gathers
 * its packets (a packet continued onto a later page is not supported: this writer never makes
 * one). Throws on anything else, including a page cut short.
 */
export function readOggPages(bytes: Uint8Array): ReadPage[] {
  const pages: ReadPage[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < bytes.length) {
    if (at + 27 > bytes.length) throw new Error(`Ogg page at ${at} is cut short`);
    if (view.getUint32(at) !== 0x4f676753) throw new Error(`no Ogg capture pattern at ${at}`);
    if (bytes[at + 4] !== 0) throw new Error(`Ogg page at ${at} has version ${bytes[at + 4]}`);
    const segments = bytes[at + 26];
    const lacing = bytes.subarray(at + 27, at + 27 + segments);
    const bodyLength = lacing.reduce((sum, v) => sum + v, 0);
    const end = at + 27 + segments + bodyLength;
    if (end > bytes.length) throw new Error(`Ogg page at ${at} is cut short`);
    const page = new Uint8Array(bytes.subarray(at, end)); // a copy (a Buffer's slice() would share memory)
    const stored = view.getUint32(at + 22, true);
    page.fill(0, 22, 26);
    if (oggCrc32(page) !== stored) throw new Error(`Ogg page at ${at} fails its CRC`);
    const flags = bytes[at + 5];
    if (flags & OGG_CONTINUED) throw new Error(`Ogg page at ${at} continues a packet`);
    const packets: Uint8Array[] = [];
    let body = at + 27 + segments;
    let length = 0;
    for (let i = 0; i < segments; i++) {
      length += lacing[i];
      if (lacing[i] < 255) {
        packets.push(bytes.subarray(body, body + length));
        body += length;
        length = 0;
      }
    }
    if (length > 0) throw new Error(`Ogg page at ${at} ends inside a packet`);
    pages.push({
      packets,
      granule: view.getBigInt64(at + 6, true),
      flags,
      serial: view.getUint32(at + 14, true),
      sequence: view.getUint32(at + 18, true),
      start: at,
      end,
    });
    at = end;
  }
  return pages;
}
