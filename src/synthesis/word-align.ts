/**
 * @module synthesis/word-align
 * Word timestamps that name the client's own words. The words of a request
 * (or of a WebSocket turn, whose text arrives in pieces) are the transcript's
 * whitespace-separated tokens once inline tags are removed (a `<break>`
 * separates words as a space does; the other tags join the text around
 * them), punctuation attached, each reported exactly once and in order. Their times come from
 * the engine, whose own units may be finer or coarser (eSpeak splits
 * "555-0199" into several words and merges "it is"): each engine unit is
 * mapped back to the transcript by character offsets, through the segment's
 * map (`text-map.ts`: tags, dictionary aliases and `<spell>` runs, which
 * stand for their original whole), and a client word spans its units from
 * the first to the last. A unit that covers several words shares its time
 * among them by their characters; a word the engine spoke with no unit of
 * its own gets times interpolated between its neighbours. Starts never go
 * backwards and no word ends before it starts. An engine that reports no
 * units gets no timestamps rather than guesses.
 */
import type { WordTiming } from '../engines/engine.js';
import type { MarkupRange } from './ssml.js';
import { tagRanges } from './tags.js';
import type { MappedText } from './text-map.js';

/** A stretch of the text an engine was given, with the stretch of the aligner's text it came from. */
interface SpokenRun {
  text: string;
  sourceFrom: number;
  sourceTo: number;
  /** Stands for its source as a whole (a normalised token, an alias): said once, with the first word it covers. */
  whole: boolean;
  said: boolean;
}

/** An engine's unit on the aligner's clock, with where it stands in the aligner's text. */
export interface WordUnit {
  start: number;
  end: number;
  from: number;
  to: number;
}

interface ClientWord {
  word: string;
  /** `[from, to)` in the aligner's text; tags inside a word are part of the range, not of the word. */
  from: number;
  to: number;
  /** Set once a unit falls inside the word. */
  start: number;
  end: number;
  timed: boolean;
}

const SPACE = /\s/u;
/** A unit that ends this close to the next one's start leaves no time between them for a word. */
const ABUTTING_SECONDS = 0.01;

/**
 * The words of one request or turn. Text is added in the order it is spoken; units as the engine
 * reports them; words come out once nothing later can change them.
 */
export class WordAligner {
  private readonly words: ClientWord[] = [];
  private length = 0;
  /** The last word touches the end of the text so far: more text may continue it. */
  private open = false;
  /** Words before this index have been handed out. */
  private emitted = 0;
  /** The last word some unit fell in. */
  private frontier = -1;
  /** Some unit has arrived: the engine reports timings. */
  private timed = false;
  private lastStart = 0;
  private lastEnd = 0;
  /** What the engine is given, run by run, for each word's `spoken` form; runs before `spokenAt` are behind every word left. */
  private readonly spoken: SpokenRun[] = [];
  private spokenAt = 0;

  /** `speakerAt`: the voice and turn of the text at a position of the aligner's text (a dialogue); each word then names them. */
  constructor(private readonly speakerAt?: (position: number) => { voice: string; turn: number }) {}

  /**
   * Adds the next piece of the transcript (inline tags and all, or an SSML document with its
   * `markup`); returns where it starts in the aligner's text.
   */
  addText(text: string, markup: readonly MarkupRange[] = tagRanges(text)): number {
    const at = this.length;
    const tags = markup;
    let tag = 0;
    for (let i = 0; i < text.length; i++) {
      // Tags are removed: a `<break>` ends a word as a space would, the others join the text around
      // them; an SSML entity is the character it stands for.
      while (tag < tags.length && tags[tag].index + tags[tag].length <= i) tag++;
      if (tag < tags.length && i >= tags[tag].index) {
        const range = tags[tag];
        if (range.pause) this.open = false;
        i = range.index + range.length - 1;
        if (range.text) this.character(range.text, at + range.index, at + i + 1);
        continue;
      }
      this.character(text[i], at + i, at + i + 1);
    }
    this.length += text.length;
    return at;
  }

  /** One character of the client's text, standing at `[from, to)` of the aligner's text. */
  private character(ch: string, from: number, to: number): void {
    if (SPACE.test(ch)) {
      this.open = false;
    } else if (this.open) {
      const last = this.words.at(-1)!;
      last.word += ch;
      last.to = to;
    } else {
      this.words.push({ word: ch, from, to, start: 0, end: 0, timed: false });
      this.open = true;
    }
  }

  /**
   * The text an engine is given for a stretch of this aligner's text (a segment's mapped text,
   * which starts at `textAt`): words handed out afterwards carry what was spoken for them.
   */
  addSpoken(source: MappedText, textAt: number): void {
    for (const run of source.runs()) {
      this.spoken.push({ text: source.text.slice(run.from, run.to), sourceFrom: textAt + run.sourceFrom, sourceTo: textAt + run.sourceTo, whole: run.whole, said: false });
    }
  }

  /** What was spoken for a word at `[from, to)`; null when no spoken text was added for it. */
  private spokenFor(from: number, to: number): string | null {
    while (this.spokenAt < this.spoken.length && this.spoken[this.spokenAt].sourceTo <= from && (!this.spoken[this.spokenAt].whole || this.spoken[this.spokenAt].said)) this.spokenAt++;
    let said: string | null = null;
    for (let i = this.spokenAt; i < this.spoken.length; i++) {
      const run = this.spoken[i];
      if (run.sourceFrom >= to) break;
      if (run.sourceTo <= from) continue;
      if (run.whole) {
        if (run.said) {
          said ??= '';
          continue;
        }
        run.said = true;
        said = (said ?? '') + run.text;
      } else {
        said = (said ?? '') + run.text.slice(Math.max(from, run.sourceFrom) - run.sourceFrom, Math.min(to, run.sourceTo) - run.sourceFrom);
      }
    }
    // Drop what every later word is past (the runs are in text order, which follows the words').
    if (this.spokenAt > 256) {
      this.spoken.splice(0, this.spokenAt);
      this.spokenAt = 0;
    }
    return said === null ? null : said.replace(/\s+/gu, ' ').trim();
  }

  /** A boundary the client made (a flush): the last word ends here even if the next text does not start with a space. */
  endWord(): void {
    this.open = false;
  }

  /** Takes the engine's units; returns the words no later unit can change. */
  add(units: readonly WordUnit[]): WordTiming[] {
    for (const unit of units) this.place(unit);
    return this.release(this.frontier);
  }

  /**
   * The text added so far has all been spoken, its audio ending at `end` on the aligner's clock:
   * returns every word not yet handed out — but the last one when more text may continue it,
   * unless `closed` says no more text comes. Nothing if the engine never reported a unit.
   */
  settle(end: number, closed: boolean): WordTiming[] {
    if (!this.timed) return [];
    const upTo = this.open && !closed ? this.words.length - 1 : this.words.length;
    return this.release(upTo, end);
  }

  private place(unit: WordUnit): void {
    this.timed = true;
    const to = Math.max(unit.to, unit.from + 1);
    const hits: { index: number; chars: number }[] = [];
    let chars = 0;
    for (let i = this.emitted; i < this.words.length && this.words[i].from < to; i++) {
      const word = this.words[i];
      if (word.to <= unit.from) continue;
      const overlap = Math.min(to, word.to) - Math.max(unit.from, word.from);
      hits.push({ index: i, chars: overlap });
      chars += overlap;
    }
    // The unit's time is shared among the words it covers by the characters of each it covers.
    let start = unit.start;
    const duration = Math.max(0, unit.end - unit.start);
    for (const hit of hits) {
      const end = start + (duration * hit.chars) / chars;
      const word = this.words[hit.index];
      if (word.timed) {
        word.start = Math.min(word.start, start);
        word.end = Math.max(word.end, end);
      } else {
        Object.assign(word, { start, end, timed: true });
      }
      this.frontier = Math.max(this.frontier, hit.index);
      start = end;
    }
  }

  /**
   * Hands out the words before `upTo`. Words without a unit share the time between their
   * neighbours (up to `end` when none follows); when there is no such time — the engine's unit
   * before them runs on into the next one, as eSpeak's do where it merges "as it is" into one
   * word — they share that unit's span with its word, by characters.
   */
  private release(upTo: number, end?: number): WordTiming[] {
    const out: WordTiming[] = [];
    if (!this.timed) return out;
    while (this.emitted < upTo) {
      const first = this.words[this.emitted];
      // The run of words without a unit that follows (or is) the next word.
      let next = first.timed ? this.emitted + 1 : this.emitted;
      while (next < upTo && !this.words[next].timed) next++;
      const after = this.words[next]?.timed ? this.words[next].start : (end ?? this.lastEnd);
      if (!first.timed) {
        this.spread(out, this.words.slice(this.emitted, next), this.lastEnd, after);
      } else if (next > this.emitted + 1 && after - first.end <= ABUTTING_SECONDS) {
        this.spread(out, this.words.slice(this.emitted, next), first.start, Math.max(after, first.end));
      } else {
        this.emit(out, first, first.start, first.end);
        next = this.emitted + 1;
      }
      this.emitted = next;
    }
    return out;
  }

  /** Hands out `run` over `[from, to)`, each word's share by its characters. */
  private spread(out: WordTiming[], run: ClientWord[], from: number, to: number): void {
    const span = Math.max(0, to - from);
    const chars = run.reduce((sum, w) => sum + w.word.length, 0);
    let at = from;
    for (const w of run) {
      const until = at + (span * w.word.length) / chars;
      this.emit(out, w, at, until);
      at = until;
    }
  }

  private emit(out: WordTiming[], word: ClientWord, start: number, end: number): void {
    const s = Math.max(start, this.lastStart);
    const e = Math.max(end, s);
    const timing: WordTiming = this.speakerAt ? { word: word.word, start: s, end: e, ...this.speakerAt(word.from) } : { word: word.word, start: s, end: e };
    const spoken = this.spoken.length > 0 ? this.spokenFor(word.from, word.to) : null;
    if (spoken !== null && spoken !== word.word) timing.spoken = spoken;
    out.push(timing);
    this.lastStart = s;
    this.lastEnd = e;
  }
}

/** Where a request stands in the words of its request or turn. */
export interface WordTrack {
  aligner: WordAligner;
  /** Where the request's transcript starts in the aligner's text. */
  textAt: number;
  /** Where the request's audio starts on the aligner's clock, in seconds. */
  secondsAt: number;
  /** No text follows this request's: its last word is complete once spoken. */
  last: boolean;
}

/** The words of a request that is the whole text (an HTTP request); `speakerAt` names each word's voice and turn (a dialogue). */
export function requestWords(transcript: string, markup?: readonly MarkupRange[], speakerAt?: (position: number) => { voice: string; turn: number }): WordTrack {
  const aligner = new WordAligner(speakerAt);
  return { aligner, textAt: aligner.addText(transcript, markup), secondsAt: 0, last: true };
}

/** Where `word` is in `text` at or after `from`: as it is, else its letters and digits without the punctuation around them. */
export function locate(text: string, word: string, from: number): { from: number; to: number } | null {
  const candidates = [word.trim(), word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')];
  for (const candidate of candidates) {
    if (!candidate) continue;
    const index = text.indexOf(candidate, from);
    if (index >= 0) return { from: index, to: index + candidate.length };
  }
  return null;
}

/**
 * One segment's engine words as units of the request or turn: their position in the segment's text
 * (as reported, or found by what they say after the last one placed, `cursor`) mapped back to the
 * transcript, and their times moved by `seconds`. Words that stand for nothing in the transcript
 * (a pause between spelled groups) or cannot be found are left out.
 */
export function segmentUnits(words: readonly WordTiming[], source: MappedText, track: WordTrack, seconds: number, cursor: { at: number }): WordUnit[] {
  const units: WordUnit[] = [];
  for (const word of words) {
    const range = word.from !== undefined ? { from: word.from, to: word.to ?? word.from } : locate(source.text, word.word, cursor.at);
    if (!range) continue;
    cursor.at = Math.max(cursor.at, range.to);
    const original = source.toSource(range.from, range.to);
    if (!original) continue;
    units.push({ start: word.start + seconds, end: word.end + seconds, from: track.textAt + original.from, to: track.textAt + original.to });
  }
  return units;
}
