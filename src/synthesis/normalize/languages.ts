/**
 * @module synthesis/normalize/languages
 * Which normaliser reads a text: English (`english.ts`) for `en` and its
 * regions, a language's table (`localized.ts`) for German, French, Spanish,
 * Italian, Portuguese and Dutch, and none for any other language: its text
 * keeps its digits for the engine to read as it does natively, never with
 * English words.
 */
import type { MappedText } from '../text-map.js';
import { normalizeMapped as normalizeEnglish, sayAs as sayAsEnglish, type SayAs } from './english.js';
import { localNormalizer } from './localized.js';

/** Whether a language tag is English (`en`, `en-GB`, `en_US`). */
export function isEnglish(tag: string): boolean {
  return /^en(?:[-_]|$)/iu.test(tag);
}

/** Whether text in `tag` is normalised at all. */
export function hasNormalizer(tag: string): boolean {
  return isEnglish(tag) || localNormalizer(tag) !== null;
}

/** `text` as spoken in `tag`; unchanged for a language without rules. */
export function normalizeIn(tag: string, text: MappedText): MappedText {
  if (isEnglish(tag)) return normalizeEnglish(text);
  return localNormalizer(tag)?.normalizeMapped(text) ?? text;
}

/** An SSML `<say-as>` run in `tag`; null when it does not fit or the language has no rules (the text is then read as it is). */
export function sayAsIn(tag: string, text: string, how: SayAs): string | null {
  if (isEnglish(tag)) return sayAsEnglish(text, how);
  return localNormalizer(tag)?.sayAs(text, how) ?? null;
}
