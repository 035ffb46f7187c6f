/**
 * @module engines/upstream/deepgram-engine
 * Serves a model from a Deepgram-dialect server — Deepgram's Aura, or
 * another Voicegate — under this gateway's own keys and billing:
 * `POST /v1/speak?model=<Aura name>&encoding=linear16&container=none&sample_rate=<rate>`,
 * read as raw 16-bit PCM as it streams in. The Aura name is the voice's
 * (`voices`); the key travels as `Authorization: Token`.
 */
import type { EngineChunk, EngineInput } from '../engine.js';
import { UpstreamEngine } from './engine.js';
import { pcmChunks } from './openai-engine.js';
import { PcmReader } from './pcm-reader.js';
import type { Upstream } from './pool.js';

/** Deepgram's `linear16` sample rates. */
export const DEEPGRAM_PCM_RATES = [8000, 16000, 24000, 32000, 48000] as const;

/** Deepgram's key header. */
export function deepgramAuth(apiKey: string): Record<string, string> {
  return { authorization: `Token ${apiKey}` };
}

export class DeepgramUpstreamEngine extends UpstreamEngine {
  readonly type = 'deepgram-upstream';

  protected send(upstream: Upstream, input: EngineInput, voice: string, signal: AbortSignal): Promise<Response> {
    const query = new URLSearchParams({ model: voice, encoding: 'linear16', container: 'none', sample_rate: String(this.sampleRate) });
    return fetch(`${upstream.url}/v1/speak?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(upstream.apiKey ? deepgramAuth(upstream.apiKey) : {}) },
      body: JSON.stringify({ text: input.text }),
      signal,
    });
  }

  protected async *read(response: Response, _input: EngineInput): AsyncGenerator<EngineChunk> {
    yield* pcmChunks(await this.audioBody(response), new PcmReader('pcm_s16le', false, this.options.model), this.sampleRate);
  }
}
