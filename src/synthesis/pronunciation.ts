/**
 * @module synthesis/pronunciation
 * Applies a pronunciation dictionary to text before it is spoken: each
 * item's `text` is replaced by its `alias` wherever it stands as a whole
 * word. Matching is one left-to-right pass (an alias is never re-expanded),
 * the longest `text` wins where items overlap, and items match every
 * capitalisation unless `case_sensitive` is true.
 */
import { ApiError } from '../errors/api-error.js';
import type { PronunciationItem } from '../store/store.js';
import { countCharacters } from './characters.js';
import { MappedText } from './text-map.js';

/**
 * What may not touch a match on either side. Combining marks count too, so
 * "cafe" does not match the start of a decomposed "café".
 */
const WORD_CHAR = String.raw`[\p{L}\p{M}\p{N}_]`;

/** Case folding of one code point, the same on both sides of every comparison. */
function foldChar(char: string): string {
  return char.toUpperCase().toLowerCase();
}

/** Folds code point by code point, so JavaScript's context rules (final sigma) never apply. */
function fold(text: string): string {
  let out = '';
  for (const char of text) out += foldChar(char);
  return out;
}

/** Escapes the syntax characters (the only escapes the `u` flag allows outside a class). */
function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * A pattern matching `text` in any capitalisation, without the `i` flag so
 * case-sensitive items can share the same expression. Every variant folds
 * to the same string as its original, which keeps the prefilter in
 * `applyPronunciation` exact.
 */
function caseless(text: string): string {
  let out = '';
  for (const char of text) {
    const target = foldChar(char);
    const candidates = [char, char.toLowerCase(), char.toUpperCase(), char.toUpperCase().toLowerCase(), char.toLowerCase().toUpperCase()];
    const variants = [...new Set(candidates)].filter((v) => [...v].length === 1 && foldChar(v) === target);
    out += variants.length > 1 ? `[${variants.map(escapeRegex).join('')}]` : escapeRegex(char);
  }
  return out;
}

interface Prepared {
  item: PronunciationItem;
  index: number;
  length: number;
  /** What the prefilter looks for: the text itself, or folded when caseless. */
  needle: string;
}

/** Per dictionary, since a WebSocket turn applies the same items to every segment. */
const prepared = new WeakMap<readonly PronunciationItem[], Prepared[]>();

function prepare(items: readonly PronunciationItem[]): Prepared[] {
  let list = prepared.get(items);
  if (!list) {
    list = items
      .map((item, index) => ({ item, index, length: countCharacters(item.text), needle: item.case_sensitive === true ? item.text : fold(item.text) }))
      .filter((p) => p.length > 0);
    prepared.set(items, list);
  }
  return list;
}

/** Replaces whole-word occurrences of each item's `text` with its `alias`. */
export function applyPronunciation(text: string, items: readonly PronunciationItem[]): string {
  return applyMappedPronunciation(MappedText.copied(text, 0), items).text;
}

/** `applyPronunciation` on mapped text: each alias stands for the text it replaced (word timestamps name the original). */
export function applyMappedPronunciation(input: MappedText, items: readonly PronunciationItem[]): MappedText {
  const text = input.text;
  const out = new MappedText();
  let at = 0;
  for (const { index, length, alias } of matches(text, items)) {
    out.append(input, at, index);
    const source = input.toSource(index, index + length);
    if (source) out.replace(alias, source.from, source.to);
    else out.insert(alias);
    at = index + length;
  }
  return at === 0 ? input : out.append(input, at);
}

/** Where the items match in `text`, left to right, with the alias of each. */
function matches(text: string, items: readonly PronunciationItem[]): { index: number; length: number; alias: string }[] {
  if (items.length === 0 || text.length === 0) return [];
  const foldedText = fold(text);
  // Only items that can occur go into the expression: a large dictionary
  // stays cheap when a transcript uses few of its words.
  const present = prepare(items).filter((p) => (p.item.case_sensitive === true ? text : foldedText).includes(p.needle));
  if (present.length === 0) return [];
  // Longest first, so an alternation picks the longest item at a position;
  // at equal length a case-sensitive item is the more specific one.
  present.sort((a, b) => b.length - a.length || Number(b.item.case_sensitive === true) - Number(a.item.case_sensitive === true) || a.index - b.index);

  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  const alternatives: string[] = [];
  for (const { item } of present) {
    if (item.case_sensitive === true) {
      if (exact.has(item.text)) continue;
      exact.set(item.text, item.alias);
      alternatives.push(escapeRegex(item.text));
    } else {
      const key = fold(item.text);
      if (folded.has(key)) continue;
      folded.set(key, item.alias);
      alternatives.push(caseless(item.text));
    }
  }
  const pattern = new RegExp(`(?<!${WORD_CHAR})(?:${alternatives.join('|')})(?!${WORD_CHAR})`, 'gu');
  // The regex took a case-sensitive item first whenever its exact text matched, so look that up first.
  return [...text.matchAll(pattern)].map((m) => ({ index: m.index!, length: m[0].length, alias: exact.get(m[0]) ?? folded.get(fold(m[0])) ?? m[0] }));
}

/** Code points text may have after expansion, whatever the model's transcript limit. */
export const MAX_EXPANDED_CHARACTERS = 20_000;

/**
 * The text to speak for `text` under a dictionary (none: unchanged); 400
 * `transcript_too_long` when expansion makes it longer than the cap.
 */
export function expandForSpeech(text: string, items: readonly PronunciationItem[] | null): string {
  return expandMappedForSpeech(MappedText.copied(text, 0), items).text;
}

/** `expandForSpeech` on mapped text (`text-map.ts`). */
export function expandMappedForSpeech(input: MappedText, items: readonly PronunciationItem[] | null): MappedText {
  if (!items || items.length === 0) return input;
  const expanded = applyMappedPronunciation(input, items);
  const count = countCharacters(expanded.text);
  if (count > MAX_EXPANDED_CHARACTERS) throw new ApiError('transcript_too_long', { count, max: MAX_EXPANDED_CHARACTERS });
  return expanded;
}
