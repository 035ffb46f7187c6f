/**
 * @module voices/clip
 * Validates and normalises a voice-clone upload: it must be a readable WAV
 * or MP3 of 1–120 s that is not silent; it is stored mono, at one rate, as
 * 16-bit WAV with its peak at −1 dBFS, so every cloning engine gets the same
 * kind of reference audio whatever was uploaded.
 */
import { decodeToFloat, rms } from '../audio/decode.js';
import { floatToInt16, int16ToBytes } from '../audio/pcm.js';
import { createResampler } from '../audio/resampler.js';
import { wavHeader } from '../audio/wav.js';
import { ApiError } from '../errors/api-error.js';

export const MIN_CLIP_SECONDS = 1;
export const MAX_CLIP_SECONDS = 120;
const PEAK = 10 ** (-1 / 20);

export interface PreparedClip {
  wav: Buffer;
  seconds: number;
  sampleRate: number;
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_audio', { reason });
}

function kind(bytes: Buffer): 'wav' | 'mp3' | null {
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE') return 'wav';
  if (bytes.length >= 3 && bytes.toString('latin1', 0, 3) === 'ID3') return 'mp3';
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0) return 'mp3';
  return null;
}

export async function prepareClip(bytes: Buffer, sampleRate: number): Promise<PreparedClip> {
  const container = kind(bytes);
  if (!container) throw invalid('clip must be a WAV or MP3 file');
  let decoded;
  try {
    decoded = await decodeToFloat(bytes, { container, sampleRate: 0 });
  } catch (err) {
    throw invalid(`clip could not be decoded as ${container.toUpperCase()}: ${(err as Error).message}`);
  }
  const seconds = decoded.samples.length / decoded.sampleRate;
  if (!Number.isFinite(seconds) || seconds < MIN_CLIP_SECONDS || seconds > MAX_CLIP_SECONDS) {
    throw invalid(`clip must be ${MIN_CLIP_SECONDS}–${MAX_CLIP_SECONDS} seconds long; it is ${seconds.toFixed(1)} s`);
  }
  if (rms(decoded.samples) < 1e-3) throw invalid('clip is silent');

  const resampler = await createResampler(decoded.sampleRate, sampleRate);
  let samples: Float32Array;
  try {
    const body = resampler.process(decoded.samples);
    const tail = resampler.flush();
    samples = new Float32Array(body.length + tail.length);
    samples.set(body);
    samples.set(tail, body.length);
  } finally {
    resampler.destroy();
  }
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const gain = peak > 0 ? PEAK / peak : 1;
  for (let i = 0; i < samples.length; i++) samples[i] *= gain;
  const pcm = int16ToBytes(floatToInt16(samples));
  return { wav: Buffer.concat([wavHeader({ sampleRate, encoding: 'pcm_s16le', dataBytes: pcm.length }), pcm]), seconds, sampleRate };
}
