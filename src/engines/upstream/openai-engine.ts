/**
 * @module engines/upstream/openai-engine
 * Serves a model from inference servers that speak OpenAI's
 * `POST /v1/audio/speech` (OmniVoice servers, vLLM-Omni, Kokoro-FastAPI,
 * LocalAI, speaches): asks for raw PCM (or WAV) and turns the body into
 * chunks as it streams in.
 */
import type { EngineChunk, EngineInput } from '../engine.js';
import { UpstreamEngine, type UpstreamEngineOptions } from './engine.js';
import { PcmReader } from './pcm-reader.js';
import type { Upstream } from './pool.js';

/** Chunks smaller than this are held back so tiny network reads do not become tiny events. */
const MIN_CHUNK_SECONDS = 0.02;

export class OpenAIUpstreamEngine extends UpstreamEngine {
  readonly type = 'openai-upstream';

  constructor(
    options: UpstreamEngineOptions,
    private readonly format: 'pcm' | 'wav',
  ) {
    super(options);
  }

  protected send(upstream: Upstream, input: EngineInput, voice: string, signal: AbortSignal): Promise<Response> {
    return fetch(`${upstream.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {}) },
      body: JSON.stringify({ model: this.options.model, input: input.text, voice, response_format: this.format, speed: input.speed, stream: true }),
      signal,
    });
  }

  protected async *read(response: Response, _input: EngineInput): AsyncGenerator<EngineChunk> {
    yield* pcmChunks(await this.audioBody(response), new PcmReader('pcm_s16le', this.format === 'wav', this.options.model), this.sampleRate);
  }
}

/** A body of PCM (or WAV) as engine chunks of at least 20 ms, however the network cut it. */
export function pcmChunks(body: ReadableStream<Uint8Array>, reader: PcmReader, sampleRate: number): AsyncGenerator<EngineChunk> {
  return coalesce(
    (async function* () {
      for await (const bytes of body) {
        const samples = reader.push(bytes);
        if (samples.length) yield samples;
      }
    })(),
    sampleRate * MIN_CHUNK_SECONDS,
  );
}

/** Joins small sample runs into chunks of at least `min` samples (the last may be shorter). */
export async function* coalesce(source: AsyncIterable<Float32Array>, min: number): AsyncGenerator<EngineChunk> {
  let parts: Float32Array[] = [];
  let size = 0;
  const take = (): EngineChunk => {
    const samples = parts.length === 1 ? parts[0] : new Float32Array(size);
    if (parts.length > 1) {
      let offset = 0;
      for (const p of parts) {
        samples.set(p, offset);
        offset += p.length;
      }
    }
    parts = [];
    size = 0;
    return { samples };
  };
  for await (const samples of source) {
    parts.push(samples);
    size += samples.length;
    if (size >= min) yield take();
  }
  if (size > 0) yield take();
}
