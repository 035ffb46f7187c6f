/**
 * @module audio/opus — streaming mono Opus in an Ogg container (RFC 7845), and the sample-rate /
 * bit-rate rules, so a request the encoder would not honour is refused with a reason.
 *
 * The codec is libopus in the WebAssembly build of `@evan/opus`, called directly (its native
 * addon is not used: it frees an encoder only when the garbage collector finds it and does not
 * tell V8 about that memory; in a loop of 30,000 streams with 1,000 open it held 1 GB). The wasm
 * build frees each encoder when its stream ends and handles wasm memory growth; opusscript, the
 * more widely used package, does not: its wrapper indexes the 16-bit heap view with byte
 * addresses, so input is written at twice its buffer's address, outside its allocation, and with
 * about 80 encoders open on one thread every encode throws ("offset is out of bounds").
 *
 * Opus codes 20 ms frames and always runs at 48 kHz inside; libopus takes input at 8, 12, 16, 24
 * or 48 kHz, so those are the output rates offered (the pipeline resamples to one of them first).
 * A decoder plays at 48 kHz or the rate it asks for; the OpusHead names the input rate. The bit
 * rate is libopus's VBR target: measured on noise and on a tone, the average lands within 1 % of
 * every target from 6 to 256 kbit/s at every rate, and requests above that are capped near
 * 260 kbit/s (libopus's mono ceiling), so the range offered is 6,000–256,000.
 */

import { randomInt } from 'node:crypto';
import { lacingValues, OGG_BOS, OGG_EOS, OGG_MAX_SEGMENTS, OggWriter } from './ogg.js';
import { sampleToInt16 } from './pcm.js';

export const OPUS_SAMPLE_RATES: readonly number[] = [8000, 12000, 16000, 24000, 48000];
export const OPUS_MIN_BIT_RATE = 6000;
export const OPUS_MAX_BIT_RATE = 256000;
/** Bit rate for a request that names none: transparent for speech at every rate offered. */
export const DEFAULT_OPUS_BIT_RATE = 64000;

/**
 * The rate to encode audio made at `sourceRate` from, for Ogg Opus asked for at `requested`: the
 * lowest rate Opus takes that holds the source's whole band, never above the one asked for. A
 * decoder plays Opus at 48 kHz whatever it was made from, so audio of 22,050 Hz is encoded from
 * 24 kHz with nothing lost, and half the samples of 48 kHz to resample and encode.
 */
export function opusSourceRate(sourceRate: number, requested: number): number {
  const holding = OPUS_SAMPLE_RATES.find((rate) => rate >= sourceRate) ?? OPUS_SAMPLE_RATES[OPUS_SAMPLE_RATES.length - 1];
  return Math.min(holding, requested);
}

/** Why Ogg Opus cannot be made at `sampleRate` Hz and `bitRate` bits/s, or null when it can. */
export function opusFormatProblem(sampleRate: number, bitRate: number): string | null {
  if (!OPUS_SAMPLE_RATES.includes(sampleRate)) {
    return `opus does not support a sample rate of ${sampleRate} Hz; use one of ${OPUS_SAMPLE_RATES.join(', ')}`;
  }
  if (!Number.isInteger(bitRate) || bitRate < OPUS_MIN_BIT_RATE || bitRate > OPUS_MAX_BIT_RATE) {
    return `opus supports bit rates from ${OPUS_MIN_BIT_RATE} to ${OPUS_MAX_BIT_RATE}; ${bitRate} was requested`;
  }
  return null;
}

/** Ogg granule positions of Opus count 48 kHz samples, whatever the input rate. */
const OPUS_RATE = 48000;
const FRAME_48K = 960; // 20 ms
/** Pages of a whole clip close after this many packets (1 s); a stream's close at every encode(). */
const MAX_PACKETS_PER_PAGE = 50;

// libopus CTL requests (opus_defines.h).
const OPUS_SET_BITRATE = 4002;
const OPUS_GET_LOOKAHEAD = 4027;

/** The identification header: version 1, mono, pre-skip, input rate, no gain, mapping family 0. */
export function opusHead(preSkip: number, inputSampleRate: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  head.set(Buffer.from('OpusHead', 'latin1'));
  head[8] = 1;
  head[9] = 1;
  view.setUint16(10, preSkip, true);
  view.setUint32(12, inputSampleRate, true);
  view.setInt16(16, 0, true);
  head[18] = 0;
  return head;
}

/** The comment header: a vendor string and no user comments. */
export function opusTags(vendor: string): Uint8Array {
  const name = Buffer.from(vendor, 'utf8');
  const tags = new Uint8Array(8 + 4 + name.length + 4);
  const view = new DataView(tags.buffer);
  tags.set(Buffer.from('OpusTags', 'latin1'));
  view.setUint32(8, name.length, true);
  tags.set(name, 12);
  view.setUint32(12 + name.length, 0, true);
  return tags;
}

export interface OggOpusStream {
  /** Samples to 48 kHz-granule pre-skip, as written in the OpusHead. */
  readonly preSkip: number;
  /**
   * Encodes the next chunk and returns the complete pages made so far: the OpusHead and OpusTags
   * pages come with the first call; then, streaming, a page of every frame this call completed,
   * else a page per second of audio. May return nothing while a frame fills.
   */
  encode(samples: Float32Array): Uint8Array;
  /**
   * Pads the last frame with silence, codes enough for the decoder's delay, and returns the
   * remaining pages, the last marked end-of-stream with the exact length as its granule (also the
   * header pages if encode() was never called). The stream is finished afterwards.
   */
  flush(): Uint8Array;
  /** Frees the encoder without finishing the stream (a request that ends early); safe at any time. */
  close(): void;
}

export interface OggOpusOptions {
  /** Close a page at the end of every encode() call, so a streamed response's audio is not held back. */
  streaming?: boolean;
  /** The logical stream's serial number; random by default, as Ogg recommends. */
  serial?: number;
}

type OpusModule = typeof import('@evan/opus/wasm/index.js');
let codec: Promise<OpusModule> | undefined;

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Creates a mono Ogg Opus stream; throws with opusFormatProblem's message for unsupported pairs. */
export async function createOggOpusStream(sampleRate: number, bitRate: number, options: OggOpusOptions = {}): Promise<OggOpusStream> {
  const problem = opusFormatProblem(sampleRate, bitRate);
  if (problem) throw new RangeError(problem);
  // Loaded on first use: compiling libopus is a cost only processes that encode Opus should pay.
  codec ??= import('@evan/opus/wasm/index.js').catch((err: unknown) => {
    codec = undefined;
    throw err;
  });
  const { Encoder } = await codec;
  const encoder = new Encoder({ channels: 1, sample_rate: sampleRate as 48000, application: 'audio' });
  encoder.ctl(OPUS_SET_BITRATE, bitRate);
  const scale = OPUS_RATE / sampleRate; // an integer for every rate offered
  const preSkip = encoder.ctl(OPUS_GET_LOOKAHEAD) * scale;
  const ogg = new OggWriter(options.serial ?? randomInt(2 ** 32));
  const streaming = options.streaming ?? false;

  const frameLength = sampleRate / 50;
  const frame = new Uint8Array(frameLength * 2);
  const frameView = new DataView(frame.buffer);
  let filled = 0;
  let packets: Uint8Array[] = [];
  let segments = 0;
  let framesCoded = 0;
  let samplesIn = 0;
  let started = false;
  let done = false;
  let out: Uint8Array[] = [];

  const closePage = (granule: number, flags = 0) => {
    out.push(ogg.page({ packets, granule: BigInt(granule), flags }));
    packets = [];
    segments = 0;
  };
  const codeFrame = () => {
    const packet = encoder.encode(frame);
    framesCoded++;
    filled = 0;
    const lacing = lacingValues(packet.length);
    // A full page closes before the next packet, so the stream's last page always holds one.
    if (packets.length === MAX_PACKETS_PER_PAGE || segments + lacing > OGG_MAX_SEGMENTS) closePage((framesCoded - 1) * FRAME_48K);
    packets.push(packet);
    segments += lacing;
  };
  const begin = () => {
    if (started) return;
    started = true;
    out.push(ogg.page({ packets: [opusHead(preSkip, sampleRate)], granule: 0n, flags: OGG_BOS }));
    out.push(ogg.page({ packets: [opusTags('voicegate')], granule: 0n, flags: 0 }));
  };
  const take = (): Uint8Array => {
    const bytes = concat(out);
    out = [];
    return bytes;
  };
  const free = () => {
    if (done) return;
    done = true;
    encoder.drop();
  };

  return {
    preSkip,
    encode(samples) {
      if (done) throw new Error('opus stream already finished');
      begin();
      for (let i = 0; i < samples.length; i++) {
        frameView.setInt16(filled * 2, sampleToInt16(samples[i]), true);
        if (++filled === frameLength) codeFrame();
      }
      samplesIn += samples.length;
      if (streaming && packets.length > 0) closePage(framesCoded * FRAME_48K);
      return take();
    },
    flush() {
      if (done) return new Uint8Array(0);
      begin();
      try {
        // Everything heard ends at pre-skip + input length (48 kHz); code frames of silence until
        // the coded audio reaches it, so the decoder's delay gives back the last input sample too.
        const end = preSkip + samplesIn * scale;
        while (framesCoded * FRAME_48K < end) {
          frame.fill(0, filled * 2);
          codeFrame();
        }
        closePage(end, OGG_EOS);
        return take();
      } finally {
        free();
      }
    },
    close: free,
  };
}
