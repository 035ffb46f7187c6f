/**
 * @module engines/espeak/words
 * Turns one eSpeak job's worker chunks into engine chunks: samples in the
 * form asked for, and word timings from eSpeak's word events. eSpeak reports
 * where each word starts; a word's end is the next word's start, and the last
 * word ends with the audio, so it goes out in a final, empty chunk.
 */
import type { WordTiming } from '../engine.js';
import type { ChunkDecoder } from '../worker-pool/stream.js';
import type { RawWordEvent } from './protocol.js';
import { wordAt, type PreparedText } from './text.js';

export interface Decoded<T> {
  samples: T;
  words?: WordTiming[];
}

export class WordDecoder<T> implements ChunkDecoder<Int16Array, RawWordEvent, Decoded<T>> {
  private pending: { word: string; start: number } | null = null;
  private emitted = 0;

  constructor(
    private readonly prepared: PreparedText,
    private readonly wantWords: boolean,
    private readonly sampleRate: number,
    private readonly convert: (pcm: Int16Array) => T,
  ) {}

  chunk(pcm: Int16Array, events: RawWordEvent[]): Decoded<T> {
    const chunk: Decoded<T> = { samples: this.convert(pcm) };
    if (this.wantWords) {
      const words: WordTiming[] = [];
      for (const event of events) {
        const start = event.ms / 1000;
        if (this.pending) words.push({ ...this.pending, end: start });
        this.pending = { word: wordAt(this.prepared, event.position, event.length), start };
      }
      if (words.length) chunk.words = words;
    }
    this.emitted += pcm.length;
    return chunk;
  }

  end(): Decoded<T> | undefined {
    if (!this.pending) return undefined;
    const last = { ...this.pending, end: this.emitted / this.sampleRate };
    this.pending = null;
    return { samples: this.convert(new Int16Array(0)), words: [last] };
  }
}
