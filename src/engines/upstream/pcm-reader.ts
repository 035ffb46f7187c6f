/**
 * @module engines/upstream/pcm-reader
 * Turns a streamed audio body (raw 16-bit or float PCM, or a WAV whose
 * header comes first) into Float32 chunks as bytes arrive, carrying a
 * partial sample across network chunk boundaries.
 */
import { ApiError } from '../../errors/api-error.js';

export type PcmEncoding = 'pcm_s16le' | 'pcm_f32le';

export class PcmReader {
  private carry = Buffer.alloc(0);
  private headerDone: boolean;
  private encoding: PcmEncoding;

  constructor(
    encoding: PcmEncoding,
    private readonly wav: boolean,
    private readonly model: string,
  ) {
    this.encoding = encoding;
    this.headerDone = !wav;
  }

  /** Feeds bytes; returns the whole samples they complete. */
  push(bytes: Uint8Array): Float32Array {
    let data = this.carry.length ? Buffer.concat([this.carry, bytes]) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (!this.headerDone) {
      const start = this.findData(data);
      if (start < 0) {
        this.carry = Buffer.from(data);
        return new Float32Array(0);
      }
      data = data.subarray(start);
      this.headerDone = true;
    }
    const width = this.encoding === 'pcm_s16le' ? 2 : 4;
    const whole = data.length - (data.length % width);
    this.carry = Buffer.from(data.subarray(whole));
    const out = new Float32Array(whole / width);
    for (let i = 0; i < out.length; i++) {
      out[i] = width === 2 ? data.readInt16LE(i * 2) / 32768 : data.readFloatLE(i * 4);
    }
    return out;
  }

  /** Walks RIFF chunks to the start of `data`; -1 until the header is complete. */
  private findData(buf: Buffer): number {
    if (buf.length < 12) return -1;
    if (buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') {
      throw new ApiError('upstream_error', { model: this.model, reason: 'the body is not a WAV file' });
    }
    let offset = 12;
    while (offset + 8 <= buf.length) {
      const id = buf.toString('latin1', offset, offset + 4);
      const size = buf.readUInt32LE(offset + 4);
      if (id === 'fmt ') {
        if (offset + 8 + 16 > buf.length) return -1;
        const format = buf.readUInt16LE(offset + 8);
        const bits = buf.readUInt16LE(offset + 22);
        if (format === 1 && bits === 16) this.encoding = 'pcm_s16le';
        else if (format === 3 && bits === 32) this.encoding = 'pcm_f32le';
        else throw new ApiError('upstream_error', { model: this.model, reason: `unsupported WAV encoding (format ${format}, ${bits} bits)` });
      }
      if (id === 'data') return offset + 8;
      offset += 8 + size + (size % 2);
    }
    return -1;
  }
}
