/**
 * @module synthesis/clauses
 * Splits streamed-in text at clause boundaries, so a WebSocket turn fed word
 * by word is spoken in natural units (not word by word) and the first audio
 * starts as soon as the first clause is complete. A cut never falls inside
 * an inline tag or a `<spell>` run (`tags.ts`): `<speed ratio="1.5"/>`
 * holds a full stop, and spelled letters may carry punctuation.
 */
import { cutAllowed } from './tags.js';

/** A boundary: sentence or clause punctuation (with closing quotes/brackets) followed by whitespace, or a line break. */
const BOUNDARY = /[.!?;:…]+["'”’)\]]*\s+|\n+/g;
/** A comma ends a clause only once the clause is long enough to be worth speaking alone. */
const COMMA = /,\s+/g;
const COMMA_MIN_CHARS = 60;

/**
 * Takes the complete clauses off the front of `text`.
 * Returns them (each with its trailing space) and the incomplete rest.
 */
export function takeClauses(text: string): { clauses: string[]; rest: string } {
  const clauses: string[] = [];
  let start = 0;
  const cuts: number[] = [];
  for (const match of text.matchAll(BOUNDARY)) cuts.push(match.index! + match[0].length);
  for (const match of text.matchAll(COMMA)) cuts.push(match.index! + match[0].length);
  cuts.sort((a, b) => a - b);
  for (const cut of cuts) {
    if (cut <= start || !cutAllowed(text, cut)) continue;
    const piece = text.slice(start, cut);
    const isComma = /,\s+$/.test(piece) && !/[.!?;:…\n]["'”’)\]]*\s+$/.test(piece);
    if (isComma && piece.length < COMMA_MIN_CHARS) continue;
    if (piece.trim()) clauses.push(piece);
    start = cut;
  }
  return { clauses, rest: text.slice(start) };
}
