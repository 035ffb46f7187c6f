/**
 * @module engines/espeak/words
 * Turns one eSpeak job's worker chunks into engine chunks: samples in the
 * form asked for, and word timings from eSpeak's word events. eSpeak reports
 * where each word starts; a word's end is the next word's start, and the last
 * word ends with the audio, so it goes out in a final, empty chunk. Each
 * word carries where it stands in the text (`WordTiming.from`/`to`): eSpeak's
 * words are its own (numbers, contractions, abbreviations split or merged),
 * and the pipeline maps them to the client's.
 */
import type { WordTiming } from '../engine.js';
import type { ChunkDecoder } from '../worker-pool/stream.js';
import type { RawWordEvent } from './protocol.js';
import { spanAt, wordAt, type PreparedText } from './text.js';

export interface Decoded<T> {
  samples: T;
  /** Samples eSpeak made for this chunk (the bytes' source when a stage encoded them). */
  made: number;
  words?: WordTiming[];
}

export class WordDecoder<S extends Int16Array | Uint8Array, T> implements ChunkDecoder<S, RawWordEvent, Decoded<T>> {
  private pending: { word: string; start: number; from?: number; to?: number } | null = null;
  private emitted = 0;

  constructor(
    private readonly prepared: PreparedText,
    private readonly wantWords: boolean,
    private readonly sampleRate: number,
    private readonly convert: (pcm: S) => T,
    private readonly empty: () => S,
  ) {}

  chunk(pcm: S, events: RawWordEvent[], made: number): Decoded<T> {
    const chunk: Decoded<T> = { samples: this.convert(pcm), made };
    if (this.wantWords) {
      const words: WordTiming[] = [];
      for (const event of events) {
        const start = event.ms / 1000;
        if (this.pending) words.push({ ...this.pending, end: start });
        const span = spanAt(this.prepared, event.position, event.length);
        this.pending = { word: wordAt(this.prepared, event.position, event.length), start, ...span };
      }
      if (words.length) chunk.words = words;
    }
    this.emitted += made;
    return chunk;
  }

  end(): Decoded<T> | undefined {
    if (!this.pending) return undefined;
    const last = { ...this.pending, end: this.emitted / this.sampleRate };
    this.pending = null;
    return { samples: this.convert(this.empty()), made: 0, words: [last] };
  }
}
