/**
 * @module audio/encoder — turns float sample chunks (already at the output rate) into the bytes of
 * the requested container/encoding. This is the one object the synthesis pipeline drives:
 * header() once, encode() per chunk, end() once, close() when it stops early. PCM encodings
 * answer at once; MP3 and Ogg Opus answer once an encoder thread has run the chunk
 * (audio/encoder-thread).
 */

import { bytesPerSample, CONTENT_TYPES, type Encoding, type OutputFormat } from './format.js';
import { openMp3ThreadStream, openOpusThreadStream, type ThreadStream } from './encoder-thread.js';
import { defaultMp3BitRate, mp3BitRateProblem } from './mp3.js';
import { DEFAULT_OPUS_BIT_RATE, opusFormatProblem } from './opus.js';
import { int16AsBytes } from './pcm.js';
import { encodePcm } from './pcm-encoding.js';
import { wavHeader } from './wav.js';
import { openFlacEncoder } from './flac.js';

export interface AudioEncoder {
  readonly contentType: string;
  /**
   * Bytes to send before the first chunk (WAV header), or null for raw/mp3/opus (Ogg Opus's
   * header pages come with the first encode() or end() result, so clips and streams both have them).
   */
  header(): Buffer | null;
  /** Encoded bytes for this chunk; may be empty (mp3 and opus buffer until a frame is full). */
  encode(samples: Float32Array): Buffer | Promise<Buffer>;
  /**
   * pcm_s16le only: the bytes of samples that are already 16-bit, equal to encode() of their Float32
   * form. The array must be the caller's own and unchanged afterwards: its memory is sent as is.
   */
  encodeInt16?(samples: Int16Array): Buffer;
  /** Trailing bytes (mp3's last frames, opus's last pages; empty otherwise). The encoder is finished afterwards. */
  end(): Buffer | Promise<Buffer>;
  /** Frees what the encoder holds when the stream stops before end(); safe to call at any time. */
  close?(): void;
}

const EMPTY = Buffer.alloc(0);

function asBuffer(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

function requireEncoding(format: OutputFormat): Encoding {
  if (!format.encoding) throw new Error(`${format.container} output needs an encoding`);
  bytesPerSample(format.encoding); // throws for unknown values arriving from untyped callers
  return format.encoding;
}

function checkSampleRate(rate: number): void {
  if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`invalid sample rate ${rate}`);
}

/** WAV header carrying the real data length, for whole-clip responses whose length is known. */
export function finalWavHeader(format: OutputFormat, dataBytes: number): Buffer {
  return wavHeader({ sampleRate: format.sampleRate, encoding: requireEncoding(format), dataBytes });
}

/**
 * Creates an encoder for `format`. For WAV, header() carries real sizes only when not streaming and
 * `totalSamples` is known; otherwise it uses the 0xFFFFFFFF "unknown length" sizes.
 * mp3 without a bitRate gets defaultMp3BitRate(sampleRate), opus DEFAULT_OPUS_BIT_RATE;
 * unsupported pairs throw. Streaming, Ogg Opus closes a page at every encode() that completes a
 * 20 ms frame, so no audio is held back; a whole clip has pages of up to a second.
 */
export async function createAudioEncoder(
  format: OutputFormat,
  opts: { streaming: boolean; totalSamples?: number },
): Promise<AudioEncoder> {
  checkSampleRate(format.sampleRate);
  const contentType = CONTENT_TYPES[format.container];
  if (!contentType) throw new Error(`unknown container: ${String(format.container)}`);
  let ended = false;
  const live = (): void => {
    if (ended) throw new Error('audio encoder already ended');
  };

  // Codecs on an encoder thread: each call answers once the thread has run it.
  const threaded = (stream: ThreadStream): AudioEncoder => ({
    contentType,
    header: () => null,
    async encode(samples) {
      live();
      return samples.length === 0 ? EMPTY : asBuffer(await stream.encode(samples));
    },
    async end() {
      if (ended) return EMPTY;
      ended = true;
      return asBuffer(await stream.flush());
    },
    close: () => stream.close(),
  });

  if (format.container === 'mp3') {
    const bitRate = format.bitRate ?? defaultMp3BitRate(format.sampleRate);
    const problem = mp3BitRateProblem(format.sampleRate, bitRate);
    if (problem) throw new RangeError(problem);
    return threaded(await openMp3ThreadStream(format.sampleRate, bitRate));
  }

  if (format.container === 'opus') {
    const bitRate = format.bitRate ?? DEFAULT_OPUS_BIT_RATE;
    const problem = opusFormatProblem(format.sampleRate, bitRate);
    if (problem) throw new RangeError(problem);
    return threaded(await openOpusThreadStream(format.sampleRate, bitRate, { streaming: opts.streaming }));
  }

  if (format.container === 'flac') {
    if (format.encoding !== 'pcm_s16le') throw new RangeError('flac is 16-bit: encoding pcm_s16le');
    const flac = await openFlacEncoder(format.sampleRate);
    return {
      contentType,
      header: () => null,
      encode: (samples) => (live(), flac.encode(samples)),
      encodeInt16: (samples) => (live(), flac.encodeInt16(samples)),
      end() {
        ended = true;
        return flac.end();
      },
      close: () => flac.close(),
    };
  }

  const encoding = requireEncoding(format);
  const { totalSamples } = opts;
  if (totalSamples !== undefined && (!Number.isInteger(totalSamples) || totalSamples < 0)) {
    throw new RangeError(`invalid totalSamples ${totalSamples}`);
  }
  const knownBytes =
    !opts.streaming && totalSamples !== undefined ? totalSamples * bytesPerSample(encoding) : undefined;
  return {
    contentType,
    header() {
      if (format.container !== 'wav') return null;
      return wavHeader({ sampleRate: format.sampleRate, encoding, dataBytes: knownBytes });
    },
    encode(samples) {
      live();
      return encodePcm(encoding, samples);
    },
    ...(encoding === 'pcm_s16le'
      ? {
          encodeInt16(samples: Int16Array) {
            live();
            return int16AsBytes(samples);
          },
        }
      : {}),
    end() {
      ended = true;
      return EMPTY;
    },
  };
}
