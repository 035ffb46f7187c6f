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
    const type = response.headers.get('content-type') ?? '';
    if (/json|text\//i.test(type)) {
      await response.body?.cancel().catch(() => undefined);
      throw this.error('upstream_error', `the server answered ${type.split(';')[0]} instead of audio`);
    }
    if (!response.body) throw this.error('upstream_error', 'the response has no body');
    yield* coalesce(readPcm(response.body, new PcmReader('pcm_s16le', this.format === 'wav', this.options.model)), this.sampleRate * MIN_CHUNK_SECONDS);
  }
}

async function* readPcm(body: ReadableStream<Uint8Array>, reader: PcmReader): AsyncGenerator<Float32Array> {
  for await (const bytes of body) {
    const samples = reader.push(bytes);
    if (samples.length) yield samples;
  }
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
