/**
 * @module captions/cues
 * Caption cues from word timestamps: the one builder behind every caption a
 * server or the CLI hands out (SRT and WebVTT alike, `render.ts`), so both
 * formats of the same audio carry the same cues. Its input is the words
 * sent, as word timestamps name them (the transcript as written, tags and
 * SSML removed), with their times in seconds. The rules:
 *
 * - a cue ends at a sentence end; a sentence too long for one cue breaks at
 *   clause punctuation, else between words; a sentence that lasts less than
 *   1 s joins the next one in its cue when the other rules allow; a change of
 *   speaker always starts a cue;
 * - a cue is at most 2 lines of `maxLineChars` display columns (East Asian
 *   wide characters count 2; `width.ts`), broken where the line-break
 *   opportunities of `Intl.Segmenter` allow, so text without spaces between
 *   words (Chinese, Japanese) breaks too;
 * - a cue starts at its first word's start and ends at its last word's end,
 *   extended to 1 s where the next cue (or the audio's end) allows, and cut
 *   at 7 s; cues never overlap and never pass the audio's end.
 */
import { cutToWidth, displayWidth, hasWide } from './width.js';

/** A word spoken, as word timestamps give it (seconds from the audio's start); `voice` names its speaker in a dialogue. */
export interface CaptionWord {
  word: string;
  start: number;
  end: number;
  voice?: string;
}

export interface CaptionOptions {
  /** Display columns a line may take: 20–80, 42 by default. */
  maxLineChars?: number;
  /** The audio's length in seconds: no cue passes it. */
  duration?: number;
  /** A speaker's name from a word's `voice`; absent: the voice itself. */
  speakerName?: (voice: string) => string;
}

/** One caption: its time in whole milliseconds, its lines, and who speaks it (a dialogue). */
export interface Cue {
  start: number;
  end: number;
  lines: string[];
  speaker?: string;
}

export const DEFAULT_MAX_LINE_CHARS = 42;
export const MIN_LINE_CHARS = 20;
export const MAX_LINE_CHARS = 80;
export const MAX_LINES = 2;
export const MIN_CUE_MS = 1000;
export const MAX_CUE_MS = 7000;

/** A piece of text a line may break after, with its time. */
interface Token {
  text: string;
  width: number;
  start: number;
  end: number;
  /** Written against the token before it, with no space (the pieces of one word). */
  glued: boolean;
  speaker?: string;
}

const words = new Intl.Segmenter(undefined, { granularity: 'word' });
const CLOSERS = `"'\\)\\]\\}»”’」』）】〕》〉`;
const SENTENCE_END = new RegExp(`[.!?…。！？‼⁇⁈⁉][${CLOSERS}]*$`, 'u');
const CLAUSE_END = new RegExp(`([,;:、，；：]|[—–]|\\s-)[${CLOSERS}]*$`, 'u');
const OPENING = /^[\p{Ps}\p{Pi}]+$/u;
/** Abbreviations whose full stop ends no sentence. */
const ABBREVIATIONS = new Set(['mr.', 'mrs.', 'ms.', 'dr.', 'st.', 'prof.', 'sr.', 'jr.', 'vs.', 'etc.', 'e.g.', 'i.e.', 'no.', 'mt.']);

/** The width the SRT `Name: ` prefix takes, or 0 when it is left out (a name too long for the line). */
export function speakerPrefixWidth(speaker: string | undefined, maxLineChars: number): number {
  if (speaker === undefined) return 0;
  const width = displayWidth(speaker) + 2;
  return width <= maxLineChars / 2 ? width : 0;
}

/** The cues of the words spoken. */
export function buildCues(spoken: readonly CaptionWord[], options: CaptionOptions = {}): Cue[] {
  const max = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  const tokens = tokenize(spoken, max, options);
  const chunks: Token[][] = [];
  for (const sentence of sentences(tokens)) chunks.push(...split(sentence, max));
  // A sentence shorter than 1 s takes the next one into its cue, when the cue still fits.
  const joined: Token[][] = [];
  for (const chunk of chunks) {
    const last = joined.at(-1);
    if (last && spanMs(last) < MIN_CUE_MS && last[0].speaker === chunk[0].speaker && fits([...last, ...chunk], max)) last.push(...chunk);
    else joined.push([...chunk]);
  }
  return timed(joined, max, options.duration);
}

/** Whether `value` is a line width the builder takes. */
export function validLineChars(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= MIN_LINE_CHARS && value <= MAX_LINE_CHARS;
}

/**
 * The words as tokens: a word with wide characters (written without spaces) is cut where
 * `Intl.Segmenter` finds words, its punctuation kept with the word before it (an opening bracket
 * with the word after), its time shared by width; a token wider than a line is cut to fit one.
 */
function tokenize(spoken: readonly CaptionWord[], max: number, options: CaptionOptions): Token[] {
  const tokens: Token[] = [];
  for (const word of spoken) {
    const text = word.word.trim();
    if (!text) continue;
    const speaker = word.voice === undefined ? undefined : (options.speakerName?.(word.voice) ?? word.voice);
    const room = max - speakerPrefixWidth(speaker, max);
    const parts = pieces(text).flatMap((part) => (displayWidth(part) > room ? cutToWidth(part, room) : [part]));
    const widths = parts.map((part) => Math.max(1, displayWidth(part)));
    const total = widths.reduce((sum, w) => sum + w, 0);
    const span = Math.max(0, word.end - word.start);
    let at = word.start;
    parts.forEach((part, index) => {
      const end = index === parts.length - 1 ? word.end : at + (span * widths[index]) / total;
      tokens.push({ text: part, width: displayWidth(part), start: at, end: Math.max(at, end), glued: index > 0, ...(speaker !== undefined ? { speaker } : {}) });
      at = end;
    });
  }
  return tokens;
}

/** A word's pieces: itself, or where it holds wide characters, the words `Intl.Segmenter` finds in it. */
function pieces(text: string): string[] {
  if (!hasWide(text)) return [text];
  const parts: string[] = [];
  let pending = '';
  for (const { segment, isWordLike } of words.segment(text)) {
    if (!isWordLike && parts.length > 0 && !OPENING.test(segment) && !pending) parts[parts.length - 1] += segment;
    else if (!isWordLike && OPENING.test(segment)) pending += segment;
    else {
      parts.push(pending + segment);
      pending = '';
    }
  }
  if (pending) parts.length > 0 ? (parts[parts.length - 1] += pending) : parts.push(pending);
  // Pieces without wide characters stay together as they were written ("GPT-4" in Japanese text).
  const merged: string[] = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if (last !== undefined && !hasWide(last) && !hasWide(part)) merged[merged.length - 1] = last + part;
    else merged.push(part);
  }
  return merged;
}

function endsSentence(token: Token, next: Token | undefined): boolean {
  if (!SENTENCE_END.test(token.text) || ABBREVIATIONS.has(token.text.toLowerCase())) return false;
  // "e.g. this" or "3. and": a full stop before a lower-case word ends no sentence.
  return next === undefined || next.glued || !/^\p{Ll}/u.test(next.text);
}

function endsClause(token: Token): boolean {
  return CLAUSE_END.test(token.text);
}

/** Tokens cut at sentence ends and at each change of speaker. */
function sentences(tokens: readonly Token[]): Token[][] {
  const out: Token[][] = [];
  let current: Token[] = [];
  tokens.forEach((token, index) => {
    if (current.length > 0 && current[0].speaker !== token.speaker) {
      out.push(current);
      current = [];
    }
    current.push(token);
    if (endsSentence(token, tokens[index + 1])) {
      out.push(current);
      current = [];
    }
  });
  if (current.length > 0) out.push(current);
  return out;
}

/** A sentence in cues that fit: broken at the last clause end that fits, else after the last word that does. */
function split(sentence: Token[], max: number): Token[][] {
  const out: Token[][] = [];
  let at = 0;
  while (at < sentence.length) {
    // What could fit is bounded (two lines, 7 s), so a sentence with no end is still cut in linear time.
    const rest = sentence.slice(at, at + 2 * MAX_LINE_CHARS + 2);
    if (at + rest.length === sentence.length && fits(rest, max)) {
      out.push(rest);
      break;
    }
    let any = 1;
    let clause = 0;
    for (let n = 1; n <= rest.length && fits(rest.slice(0, n), max); n++) {
      any = n;
      if (n < rest.length && endsClause(rest[n - 1])) clause = n;
    }
    // A clause end is taken unless it leaves the cue less than half full.
    const cut = Math.min(clause > 0 && widthOf(rest.slice(0, clause)) * 2 >= widthOf(rest.slice(0, any)) ? clause : any, rest.length);
    out.push(rest.slice(0, cut));
    at += cut;
  }
  return out;
}

function widthOf(tokens: readonly Token[]): number {
  return tokens.reduce((sum, token, index) => sum + token.width + (index > 0 && !token.glued ? 1 : 0), 0);
}

function spanMs(tokens: readonly Token[]): number {
  return (tokens.at(-1)!.end - tokens[0].start) * 1000;
}

/** Whether the tokens make one cue: at most 7 s of speech in at most two lines (a single token always fits). */
function fits(tokens: readonly Token[], max: number): boolean {
  if (tokens.length === 1) return true;
  return spanMs(tokens) <= MAX_CUE_MS && lines(tokens, max) !== null;
}

/**
 * The tokens as at most two lines (the first leaving room for the SRT speaker prefix): one line when
 * they fit it, else the two that are most even, a break after clause punctuation preferred; null
 * when two lines cannot hold them. Lines break between tokens: at a space, between the words
 * `Intl.Segmenter` finds in text written without spaces, or inside a word wider than a line.
 */
function lines(tokens: readonly Token[], max: number): string[] | null {
  const first = max - speakerPrefixWidth(tokens[0].speaker, max);
  const total = widthOf(tokens);
  if (total <= first) return [join(tokens)];
  if (total > first + max + 1) return null;
  let best: { at: number; score: number } | null = null;
  let left = 0;
  for (let at = 1; at < tokens.length; at++) {
    left += tokens[at - 1].width + (at > 1 && !tokens[at - 1].glued ? 1 : 0);
    if (left > first) break;
    const glued = tokens[at].glued;
    const right = total - left - (glued ? 0 : 1);
    if (right > max) continue;
    const score = Math.max(left, right) - (endsClause(tokens[at - 1]) ? 4 : 0);
    if (!best || score < best.score) best = { at, score };
  }
  return best ? [join(tokens.slice(0, best.at)), join(tokens.slice(best.at))] : null;
}

function join(tokens: readonly Token[]): string {
  return tokens.map((token, index) => (index > 0 && !token.glued ? ` ${token.text}` : token.text)).join('');
}

/** Times in whole milliseconds: first word's start to last word's end, 1–7 s where the neighbours allow, no overlap. */
function timed(groups: readonly Token[][], max: number, duration: number | undefined): Cue[] {
  const limit = duration === undefined ? Infinity : Math.round(duration * 1000);
  const cues: Cue[] = groups.map((group) => ({
    start: Math.min(Math.round(group[0].start * 1000), limit),
    end: Math.min(Math.round(group.at(-1)!.end * 1000), limit),
    lines: lines(group, max) ?? [join(group)],
    ...(group[0].speaker !== undefined ? { speaker: group[0].speaker } : {}),
  }));
  for (let i = 0; i < cues.length; i++) {
    const cue = cues[i];
    const next = cues[i + 1]?.start ?? limit;
    cue.end = Math.min(Math.max(cue.end, cue.start + MIN_CUE_MS), cue.start + MAX_CUE_MS, next, limit);
    // Words with no time between them (or at the very end of the audio): the cue still lasts 1 ms,
    // and the next one starts after it.
    if (cue.end <= cue.start) {
      if (cue.start >= limit) cue.start = Math.max(0, limit - 1);
      cue.end = cue.start + 1;
      const after = cues[i + 1];
      if (after && after.start < cue.end) after.start = cue.end;
    }
  }
  return cues;
}
