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
import type { WordTiming } from '../engines/engine.js';
import type { SynthesisRequest } from './request.js';

export interface AudioPiece {
  /** Encoded audio (a streamed WAV's header is prepended to the first piece). */
  audio: Buffer;
  /** Words whose timing became known with this piece. */
  words?: WordTiming[];
  /** Milliseconds spent making this piece (engine, resampling, encoding). */
  stepTime: number;
}

export async function* synthesizeAudio(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<AudioPiece> {
  const { engine, format, settings } = request;
  const resampler = await createResampler(engine.sampleRate, format.sampleRate);
  const encoder = await createAudioEncoder(format, { streaming: request.streaming });
  let header = request.streaming ? encoder.header() : null;
  const withHeader = (audio: Buffer): Buffer => {
    if (!header) return audio;
    const joined = Buffer.concat([header, audio]);
    header = null;
    return joined;
  };
  try {
    const chunks = engine.synthesize(
      { text: request.text, voice: request.voice, speed: settings.speed, language: request.language ?? undefined, wordTimings: request.wordTimestamps },
      signal,
    );
    let started = performance.now();
    for await (const chunk of chunks) {
      const samples = settings.volume === 1 ? chunk.samples : applyGain(chunk.samples, settings.volume);
      const audio = encoder.encode(resampler.process(samples));
      if (audio.length === 0 && !chunk.words) continue;
      const stepTime = performance.now() - started;
      yield chunk.words ? { audio: withHeader(audio), words: chunk.words, stepTime } : { audio: withHeader(audio), stepTime };
      started = performance.now();
    }
    const tail = Buffer.concat([encoder.encode(resampler.flush()), encoder.end()]);
    if (tail.length > 0 || header) yield { audio: withHeader(tail), stepTime: performance.now() - started };
  } finally {
    resampler.destroy();
  }
}

/** Runs the whole synthesis and returns the finished clip (WAV with its real size). */
export async function renderClip(request: SynthesisRequest, signal: AbortSignal): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const piece of synthesizeAudio({ ...request, streaming: false }, signal)) {
    pieces.push(piece.audio);
    size += piece.audio.length;
  }
  if (request.format.container === 'wav') pieces.unshift(finalWavHeader(request.format, size));
  return Buffer.concat(pieces);
}
