/**
 * @module synthesis/pipeline
 * The shared synthesis pipeline: engine → volume → resample → encode, chunk
 * by chunk with resampler and encoder state carried across chunks, so every
 * transport streams the first audio as soon as the engine makes it. Whole
 * clips are the same stream collected, with a WAV header that knows its size.
 */
import { createAudioEncoder, finalWavHeader } from '../audio/encoder.js';
import { applyGain } from '../audio/pcm.js';
import { createResampler } from '../audio/resampler.js';
import type { EngineChunk, WordTiming } from '../engines/engine.js';
import { offersInt16, type Int16Chunk, type Int16Engine } from '../engines/pcm16.js';
import { ApiError } from '../errors/api-error.js';
import type { SynthesisRequest } from './request.js';

export interface AudioPiece {
  /** Encoded audio (a streamed WAV's header is prepended to the first piece). */
  audio: Buffer;
  /** Words whose timing became known with this piece. */
  words?: WordTiming[];
  /** Milliseconds spent making this piece (engine, resampling, encoding). */
  stepTime: number;
  /** Seconds of audio the engine made for this piece. */
  seconds: number;
}

/** An engine that answers with no audio at all has failed; nothing is charged for it. */
function noAudio(request: SynthesisRequest): ApiError {
  // Remote servers have their own code, so an operator knows where to look.
  return request.engine.type.endsWith('-upstream')
    ? new ApiError('upstream_error', { model: request.model.id, reason: 'the server answered with no audio' })
    : new ApiError('engine_error', { reason: ': the engine produced no audio' });
}

export async function* synthesizeAudio(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<AudioPiece> {
  const { engine, format, settings } = request;
  // At the engine's own rate there is nothing to resample: chunks go to the encoder as they are.
  const resampler = engine.sampleRate === format.sampleRate ? null : await createResampler(engine.sampleRate, format.sampleRate);
  const encoder = await createAudioEncoder(format, { streaming: request.streaming });
  let header = request.streaming ? encoder.header() : null;
  const encodeFloat = (chunk: Float32Array): Buffer => {
    const samples = settings.volume === 1 ? chunk : applyGain(chunk, settings.volume);
    return encoder.encode(resampler ? resampler.process(samples) : samples);
  };
  const withHeader = (audio: Buffer): Buffer => {
    if (!header) return audio;
    const joined = Buffer.concat([header, audio]);
    header = null;
    return joined;
  };
  try {
    const input = { text: request.text, voice: request.voice, speed: settings.speed, language: request.language ?? undefined, wordTimings: request.wordTimestamps };
    // s16 at the engine's rate and volume 1: an engine's own 16-bit samples become the bytes as they are.
    const encodeInt16 = !resampler && settings.volume === 1 && offersInt16(engine) ? encoder.encodeInt16 : undefined;
    const chunks: AsyncIterable<EngineChunk | Int16Chunk> = encodeInt16 ? (engine as Int16Engine).synthesizeInt16(input, signal) : engine.synthesize(input, signal);
    let started = performance.now();
    let samples = 0;
    const rate = engine.sampleRate;
    for await (const chunk of chunks) {
      samples += chunk.samples.length;
      const audio = encodeInt16 ? encodeInt16(chunk.samples as Int16Array) : encodeFloat(chunk.samples as Float32Array);
      if (audio.length === 0 && !chunk.words) continue;
      const stepTime = performance.now() - started;
      const seconds = chunk.samples.length / rate;
      yield chunk.words ? { audio: withHeader(audio), words: chunk.words, stepTime, seconds } : { audio: withHeader(audio), stepTime, seconds };
      started = performance.now();
    }
    if (samples === 0) throw noAudio(request);
    const tail = resampler ? Buffer.concat([encoder.encode(resampler.flush()), encoder.end()]) : encoder.end();
    if (tail.length > 0 || header) yield { audio: withHeader(tail), stepTime: performance.now() - started, seconds: 0 };
  } finally {
    resampler?.destroy();
  }
}

/**
 * Runs the whole synthesis and returns the finished clip (WAV with its real size). One piece is
 * returned as is; several are joined once: one copy costs less than writing them out one by one.
 */
export async function renderClip(request: SynthesisRequest, signal: AbortSignal): Promise<{ audio: Buffer; seconds: number }> {
  const pieces: Buffer[] = [];
  let size = 0;
  let seconds = 0;
  for await (const piece of synthesizeAudio({ ...request, streaming: false }, signal)) {
    seconds += piece.seconds;
    if (piece.audio.length === 0) continue;
    pieces.push(piece.audio);
    size += piece.audio.length;
  }
  if (request.format.container === 'wav') pieces.unshift(finalWavHeader(request.format, size));
  return { audio: pieces.length === 1 ? pieces[0] : Buffer.concat(pieces), seconds };
}
