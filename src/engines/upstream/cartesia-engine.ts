/**
 * @module engines/upstream/cartesia-engine
 * Serves a model from a Cartesia-dialect server — another Voicegate, or a
 * hosted Cartesia-style service — under this gateway's own keys and billing.
 * Streams over `/tts/sse` (with word timestamps when asked); a speed other
 * than 1 is only allowed on whole clips there, so then the raw
 * `/tts/bytes` body is read as it arrives instead.
 */
import type { EngineChunk, EngineInput, WordTiming } from '../engine.js';
import { UpstreamEngine, type UpstreamEngineOptions } from './engine.js';
import { coalesce } from './openai-engine.js';
import { PcmReader, type PcmEncoding } from './pcm-reader.js';
import type { Upstream } from './pool.js';

const CARTESIA_VERSION = '2026-08-14';

export class CartesiaUpstreamEngine extends UpstreamEngine {
  readonly type = 'cartesia-upstream';

  constructor(
    options: UpstreamEngineOptions,
    private readonly encoding: PcmEncoding,
  ) {
    super(options);
  }

  protected send(upstream: Upstream, input: EngineInput, voice: string, signal: AbortSignal): Promise<Response> {
    const sse = input.speed === 1;
    return fetch(`${upstream.url}${sse ? '/tts/sse' : '/tts/bytes'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'cartesia-version': CARTESIA_VERSION,
        ...(upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model_id: this.options.model,
        transcript: input.text,
        voice: { mode: 'id', id: voice },
        output_format: { container: 'raw', encoding: this.encoding, sample_rate: this.sampleRate },
        ...(input.language ? { language: input.language } : {}),
        ...(sse ? { add_timestamps: input.wordTimings } : { generation_config: { speed: input.speed } }),
      }),
      signal,
    });
  }

  protected async *read(response: Response, input: EngineInput): AsyncGenerator<EngineChunk> {
    const type = response.headers.get('content-type') ?? '';
    if (!response.body) throw this.error('upstream_error', 'the response has no body');
    const sse = input.speed === 1;
    if (sse !== /text\/event-stream/i.test(type)) {
      await response.body.cancel().catch(() => undefined);
      throw this.error('upstream_error', `the server answered ${type.split(';')[0] || 'no content type'} instead of ${sse ? 'an event stream' : 'audio'}`);
    }
    const reader = new PcmReader(this.encoding, false, this.options.model);
    if (!sse) {
      yield* coalesce(
        (async function* () {
          for await (const bytes of response.body!) {
            const samples = reader.push(bytes);
            if (samples.length) yield samples;
          }
        })(),
        this.sampleRate * 0.02,
      );
      return;
    }
    yield* this.readEvents(response.body, reader);
  }

  private async *readEvents(body: ReadableStream<Uint8Array>, reader: PcmReader): AsyncGenerator<EngineChunk> {
    const decoder = new TextDecoder();
    let buffer = '';
    let words: WordTiming[] = [];
    for await (const bytes of body) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (!data) continue;
        let event: Record<string, any>;
        try {
          event = JSON.parse(data);
        } catch {
          throw this.error('upstream_error', 'the event stream carried an unreadable event');
        }
        if (event.type === 'chunk' && typeof event.data === 'string') {
          const samples = reader.push(Buffer.from(event.data, 'base64'));
          const chunk: EngineChunk = { samples };
          if (words.length) chunk.words = words;
          words = [];
          yield chunk;
        } else if (event.type === 'timestamps' && event.word_timestamps) {
          const t = event.word_timestamps as { words: string[]; start: number[]; end: number[] };
          t.words.forEach((word, i) => words.push({ word, start: t.start[i], end: t.end[i] }));
        } else if (event.type === 'error') {
          throw this.error('upstream_error', `the server reported ${event.error_code ?? 'an error'} (${event.status_code ?? 'no status'})`);
        } else if (event.type === 'done') {
          if (words.length) yield { samples: new Float32Array(0), words };
          return;
        }
      }
    }
    throw this.error('upstream_error', 'the event stream ended without done');
  }
}
