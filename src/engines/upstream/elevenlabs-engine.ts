/**
 * @module engines/upstream/elevenlabs-engine
 * Serves a model from an ElevenLabs-dialect server — ElevenLabs itself, or
 * another Voicegate — under this gateway's own keys and billing. Streams
 * `POST /v1/text-to-speech/{voice}/stream` as raw 16-bit PCM at the engine's
 * rate (`output_format=pcm_<rate>`) for the lowest first audio; when word
 * timings are asked, `/stream/with-timestamps`, whose JSON lines carry the
 * audio and a character alignment that is read back into words. The key
 * travels in `xi-api-key`.
 */
import type { EngineChunk, EngineInput, WordTiming } from '../engine.js';
import { UpstreamEngine, type UpstreamEngineOptions } from './engine.js';
import { pcmChunks } from './openai-engine.js';
import { PcmReader } from './pcm-reader.js';
import type { Upstream } from './pool.js';

/** ElevenLabs' `output_format` raw PCM rates. */
export const ELEVENLABS_PCM_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

/** ElevenLabs' key header. */
export function elevenLabsAuth(apiKey: string): Record<string, string> {
  return { 'xi-api-key': apiKey };
}

interface Alignment {
  characters?: string[];
  character_start_times_seconds?: number[];
  character_end_times_seconds?: number[];
}

export class ElevenLabsUpstreamEngine extends UpstreamEngine {
  readonly type = 'elevenlabs-upstream';

  protected send(upstream: Upstream, input: EngineInput, voice: string, signal: AbortSignal): Promise<Response> {
    const path = input.wordTimings ? '/stream/with-timestamps' : '/stream';
    const query = new URLSearchParams({ output_format: `pcm_${this.sampleRate}` });
    return fetch(`${upstream.url}/v1/text-to-speech/${encodeURIComponent(voice)}${path}?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(upstream.apiKey ? elevenLabsAuth(upstream.apiKey) : {}) },
      body: JSON.stringify({
        text: input.text,
        model_id: this.options.model,
        ...(input.language ? { language_code: input.language.split('-')[0] } : {}),
        ...(input.speed !== 1 ? { voice_settings: { speed: input.speed } } : {}),
      }),
      signal,
    });
  }

  protected async *read(response: Response, input: EngineInput): AsyncGenerator<EngineChunk> {
    const type = response.headers.get('content-type') ?? '';
    if (!response.body) throw this.error('upstream_error', 'the response has no body');
    const lines = input.wordTimings;
    if (lines !== /json/i.test(type)) {
      await response.body.cancel().catch(() => undefined);
      throw this.error('upstream_error', `the server answered ${type.split(';')[0] || 'no content type'} instead of ${lines ? 'JSON lines' : 'audio'}`);
    }
    const reader = new PcmReader('pcm_s16le', false, this.options.model);
    if (!lines) {
      yield* pcmChunks(response.body, reader, this.sampleRate);
      return;
    }
    yield* this.readLines(response.body, reader);
  }

  /** One JSON object per line: `audio_base64` and the `alignment` of its characters (seconds from the start of the whole audio). */
  private async *readLines(body: ReadableStream<Uint8Array>, reader: PcmReader): AsyncGenerator<EngineChunk> {
    const decoder = new TextDecoder();
    const words = new WordCollector();
    let buffer = '';
    const parse = (line: string): EngineChunk | null => {
      if (!line.trim()) return null;
      let event: { audio_base64?: unknown; alignment?: Alignment | null };
      try {
        event = JSON.parse(line);
      } catch {
        throw this.error('upstream_error', 'the stream carried an unreadable line');
      }
      const samples = typeof event.audio_base64 === 'string' ? reader.push(Buffer.from(event.audio_base64, 'base64')) : new Float32Array(0);
      const done = event.alignment ? words.push(event.alignment) : [];
      return done.length ? { samples, words: done } : { samples };
    };
    for await (const bytes of body) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const chunk = parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        if (chunk) yield chunk;
      }
    }
    const last = parse(buffer);
    if (last) yield last;
    const rest = words.finish();
    if (rest.length) yield { samples: new Float32Array(0), words: rest };
  }
}

/**
 * Reads character alignments back into words: a word is a run of characters between spaces, from its
 * first character's start to its last one's end. A word is only complete once a space (or the end)
 * follows it, so one split across two lines is given once.
 */
export class WordCollector {
  private word = '';
  private start = 0;
  private end = 0;

  push(alignment: Alignment): WordTiming[] {
    const out: WordTiming[] = [];
    const chars = alignment.characters ?? [];
    chars.forEach((ch, i) => {
      if (/\s/.test(ch)) {
        if (this.word) out.push(this.take());
        return;
      }
      if (!this.word) this.start = alignment.character_start_times_seconds?.[i] ?? this.end;
      this.word += ch;
      this.end = alignment.character_end_times_seconds?.[i] ?? this.start;
    });
    return out;
  }

  finish(): WordTiming[] {
    return this.word ? [this.take()] : [];
  }

  private take(): WordTiming {
    const word = { word: this.word, start: this.start, end: this.end };
    this.word = '';
    return word;
  }
}
