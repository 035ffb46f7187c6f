/**
 * @module audio/wav — RIFF/WAVE header writer and a defensive chunk-walking parser.
 *
 * Header layouts:
 *  - pcm_s16le: the canonical 44-byte header (format 1, 16-bit, 16-byte fmt chunk).
 *  - pcm_f32le (format 3), pcm_alaw (6), pcm_mulaw (7): RIFF requires every non-PCM format to carry
 *    WAVEFORMATEX's cbSize field (an 18-byte fmt chunk, cbSize = 0) and a `fact` chunk holding the
 *    sample count, giving a 58-byte header. This is what sox/ffmpeg write and what strict readers
 *    (Windows ACM, libsndfile) expect; lenient readers skip the extra fields anyway.
 * A streaming header (length unknown) uses 0xFFFFFFFF for the RIFF, data and fact sizes — the
 * de-facto "until end of stream" marker that ffmpeg, browsers and parseWav below understand.
 */

import { bytesPerSample, type Encoding } from './format.js';

export const WAVE_FORMAT_PCM = 1;
export const WAVE_FORMAT_IEEE_FLOAT = 3;
export const WAVE_FORMAT_ALAW = 6;
export const WAVE_FORMAT_MULAW = 7;
export const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

const UNKNOWN_SIZE = 0xffffffff;

const FORMAT_CODES: Record<Encoding, number> = {
  pcm_s16le: WAVE_FORMAT_PCM,
  pcm_f32le: WAVE_FORMAT_IEEE_FLOAT,
  pcm_alaw: WAVE_FORMAT_ALAW,
  pcm_mulaw: WAVE_FORMAT_MULAW,
};

/** Writes a four-character chunk id; returns the next offset (Buffer.write returns a byte count). */
function tag(buf: Buffer, id: string, offset: number): number {
  buf.write(id, offset, 'latin1');
  return offset + 4;
}

/** Builds a mono WAV header. Omit `dataBytes` when streaming (sizes become 0xFFFFFFFF). */
export function wavHeader(opts: { sampleRate: number; encoding: Encoding; dataBytes?: number }): Buffer {
  const { sampleRate, encoding, dataBytes } = opts;
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate > 0xffffffff) {
    throw new RangeError(`invalid sample rate ${sampleRate}`);
  }
  const format = FORMAT_CODES[encoding];
  if (format === undefined) throw new Error(`unknown encoding: ${String(encoding)}`);
  const bps = bytesPerSample(encoding);
  const extended = format !== WAVE_FORMAT_PCM;
  const fmtSize = extended ? 18 : 16;
  const headerLen = 12 + 8 + fmtSize + (extended ? 12 : 0) + 8;

  let riffSize = UNKNOWN_SIZE;
  let dataSize = UNKNOWN_SIZE;
  let sampleCount = UNKNOWN_SIZE;
  if (dataBytes !== undefined) {
    if (!Number.isInteger(dataBytes) || dataBytes < 0) throw new RangeError(`invalid dataBytes ${dataBytes}`);
    // RIFF size = exact file length - 8. An odd-length (8-bit) data chunk formally wants a pad byte,
    // but we never write one: a missing pad at end of file is tolerated by every reader.
    const riff = headerLen - 8 + dataBytes;
    if (riff > 0xffffffff) throw new RangeError(`${dataBytes} bytes of audio do not fit in a WAV file`);
    riffSize = riff;
    dataSize = dataBytes;
    sampleCount = Math.floor(dataBytes / bps);
  }

  const h = Buffer.alloc(headerLen);
  let o = 0;
  o = tag(h, 'RIFF', o);
  o = h.writeUInt32LE(riffSize, o);
  o = tag(h, 'WAVE', o);
  o = tag(h, 'fmt ', o);
  o = h.writeUInt32LE(fmtSize, o);
  o = h.writeUInt16LE(format, o);
  o = h.writeUInt16LE(1, o); // channels
  o = h.writeUInt32LE(sampleRate, o);
  o = h.writeUInt32LE(sampleRate * bps, o); // byte rate
  o = h.writeUInt16LE(bps, o); // block align
  o = h.writeUInt16LE(bps * 8, o); // bits per sample
  if (extended) {
    o = h.writeUInt16LE(0, o); // cbSize
    o = tag(h, 'fact', o);
    o = h.writeUInt32LE(4, o);
    o = h.writeUInt32LE(sampleCount, o);
  }
  o = tag(h, 'data', o);
  h.writeUInt32LE(dataSize, o);
  return h;
}

export interface ParsedWav {
  /** WAVE format tag; for WAVE_FORMAT_EXTENSIBLE files, the tag taken from the SubFormat GUID. */
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  data: Buffer;
}

/**
 * Parses a WAV file by walking its chunks. Any malformed input throws an Error (never a RangeError
 * from a read past the end). A data size of 0xFFFFFFFF, or one running past the buffer (streamed or
 * truncated files), takes the rest of the buffer. `data` is a view into `buf`, not a copy.
 */
export function parseWav(buf: Buffer): ParsedWav {
  if (!Buffer.isBuffer(buf)) throw new Error('WAV input must be a Buffer');
  if (buf.length < 12) throw new Error('not a WAV file: too short');
  if (buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error('not a WAV file: missing RIFF/WAVE signature');
  }
  let fmt: Omit<ParsedWav, 'data'> | undefined;
  let pos = 12;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    const body = pos + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + size > buf.length) throw new Error('invalid WAV: truncated fmt chunk');
      let format = buf.readUInt16LE(body);
      const channels = buf.readUInt16LE(body + 2);
      const sampleRate = buf.readUInt32LE(body + 4);
      const bitsPerSample = buf.readUInt16LE(body + 14);
      if (format === WAVE_FORMAT_EXTENSIBLE) {
        // WAVEFORMATEXTENSIBLE: cbSize ≥ 22, SubFormat GUID at offset 24 starts with the real tag.
        if (size < 40 || buf.readUInt16LE(body + 16) < 22) throw new Error('invalid WAV: short extensible fmt chunk');
        format = buf.readUInt16LE(body + 24);
      }
      if (channels === 0) throw new Error('invalid WAV: zero channels');
      if (sampleRate === 0) throw new Error('invalid WAV: zero sample rate');
      if (bitsPerSample === 0) throw new Error('invalid WAV: zero bits per sample');
      fmt = { format, channels, sampleRate, bitsPerSample };
    } else if (id === 'data') {
      if (!fmt) throw new Error('invalid WAV: data chunk before fmt chunk');
      const end = size === UNKNOWN_SIZE || body + size > buf.length ? buf.length : body + size;
      return { ...fmt, data: buf.subarray(body, end) };
    }
    pos = body + size + (size & 1); // chunks are padded to even length
  }
  throw new Error(fmt ? 'invalid WAV: no data chunk' : 'invalid WAV: no fmt chunk');
}
