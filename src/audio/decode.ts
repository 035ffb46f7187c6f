/**
 * @module audio/decode — decodes WAV (any of the four encodings), raw PCM, MP3 and Ogg Opus to
 * float samples: for reading uploaded voice clips, and for tests that check what a client would
 * actually hear. The mp3 decoder (mpg123-decoder, wasm) is loaded lazily, on first mp3 only.
 * The Ogg Opus decoder (ogg-opus-decoder) is a development dependency, loaded only when a test
 * decodes Opus: nothing the server reads is Opus.
 */

import { decodeFlac } from './flac.js';
import { bytesPerSample, type Encoding, type OutputFormat } from './format.js';
import { decodeAlaw, decodeMulaw } from './g711.js';
import { int16ToFloat } from './pcm.js';
import { parseWav, WAVE_FORMAT_ALAW, WAVE_FORMAT_IEEE_FLOAT, WAVE_FORMAT_MULAW, WAVE_FORMAT_PCM } from './wav.js';

export interface DecodedAudio {
  sampleRate: number;
  samples: Float32Array;
}

/** Root mean square level; 0 for an empty signal. */
export function rms(samples: ArrayLike<number>): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / samples.length);
}

/** Decodes interleaved PCM bytes to float, averaging channels down to mono. */
function decodePcm(encoding: Encoding, bytes: Buffer, channels = 1): Float32Array {
  // Copy into an aligned buffer: `bytes` may sit at an odd offset inside a larger Buffer.
  const width = bytesPerSample(encoding);
  const frames = Math.floor(bytes.length / (width * channels));
  const raw = new Uint8Array(bytes.subarray(0, frames * width * channels));
  let flat: Float32Array;
  switch (encoding) {
    case 'pcm_s16le':
      flat = int16ToFloat(new Int16Array(raw.buffer));
      break;
    case 'pcm_f32le':
      flat = new Float32Array(raw.buffer);
      break;
    case 'pcm_mulaw':
      flat = int16ToFloat(decodeMulaw(raw));
      break;
    case 'pcm_alaw':
      flat = int16ToFloat(decodeAlaw(raw));
      break;
    default:
      throw new Error(`unknown encoding: ${String(encoding)}`);
  }
  return channels === 1 ? flat : downmix(flat, channels);
}

function downmix(interleaved: Float32Array, channels: number): Float32Array {
  const out = new Float32Array(Math.floor(interleaved.length / channels));
  for (let i = 0; i < out.length; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += interleaved[i * channels + c];
    out[i] = s / channels;
  }
  return out;
}

function wavEncoding(format: number, bits: number): Encoding {
  if (format === WAVE_FORMAT_PCM && bits === 16) return 'pcm_s16le';
  if (format === WAVE_FORMAT_IEEE_FLOAT && bits === 32) return 'pcm_f32le';
  if (format === WAVE_FORMAT_MULAW && bits === 8) return 'pcm_mulaw';
  if (format === WAVE_FORMAT_ALAW && bits === 8) return 'pcm_alaw';
  throw new Error(`unsupported WAV encoding: format ${format}, ${bits} bits`);
}

async function decodeMp3(bytes: Buffer): Promise<DecodedAudio> {
  const { MPEGDecoder } = await import('mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const out = decoder.decode(new Uint8Array(bytes));
    if (out.errors.length > 0) throw new Error(`mp3 decode error: ${out.errors[0].message}`);
    if (out.samplesDecoded === 0) throw new Error('mp3 decode produced no audio');
    const ch = out.channelData;
    let samples = ch[0].slice(0, out.samplesDecoded);
    if (ch.length > 1) {
      samples = samples.map((v, i) => ch.reduce((s, c) => s + c[i], 0) / ch.length);
    }
    return { sampleRate: out.sampleRate, samples };
  } finally {
    decoder.free();
  }
}

async function decodeOggOpus(bytes: Buffer): Promise<DecodedAudio> {
  const { OggOpusDecoder } = await import('ogg-opus-decoder');
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    const out = await decoder.decodeFile(new Uint8Array(bytes));
    if (out.errors.length > 0) throw new Error(`opus decode error: ${out.errors[0].message}`);
    return { sampleRate: out.sampleRate, samples: out.channelData[0]?.slice(0, out.samplesDecoded) ?? new Float32Array(0) };
  } finally {
    decoder.free();
  }
}

/**
 * Decodes a complete response body. WAV takes rate and encoding from its header (so the header is
 * checked too); raw takes them from `format`; mp3 reports the rate found in its frames, and its
 * samples include the codec's priming delay and final-frame padding (no gapless trimming). Ogg Opus
 * is decoded at 48 kHz, Opus's own rate, whatever the stream's input rate; its pre-skip and
 * end trimming are applied, so the samples are the input's, resampled.
 */
export async function decodeToFloat(bytes: Buffer, format: OutputFormat): Promise<DecodedAudio> {
  switch (format.container) {
    case 'wav': {
      const wav = parseWav(bytes);
      const samples = decodePcm(wavEncoding(wav.format, wav.bitsPerSample), wav.data, wav.channels);
      return { sampleRate: wav.sampleRate, samples };
    }
    case 'raw': {
      if (!format.encoding) throw new Error('raw output needs an encoding');
      const width = bytesPerSample(format.encoding);
      if (bytes.length % width !== 0) throw new Error(`raw ${format.encoding} length ${bytes.length} is not whole samples`);
      return { sampleRate: format.sampleRate, samples: decodePcm(format.encoding, bytes) };
    }
    case 'mp3':
      return decodeMp3(bytes);
    case 'opus':
      return decodeOggOpus(bytes);
    case 'flac':
      return decodeFlac(bytes);
    default:
      throw new Error(`unknown container: ${String(format.container)}`);
  }
}
