/**
 * @module synthesis/clauses
 * Splits streamed-in text at clause boundaries, so a WebSocket turn fed word
 * by word is spoken in natural units (not word by word) and the first audio
 * starts as soon as the first clause is complete. A cut never falls inside
 * an inline tag or a `<spell>` run (`tags.ts`): `<speed ratio="1.5"/>`
 * holds a full stop, and spelled letters may carry punctuation. Nor after
 * an abbreviation that does not end a sentence (`Dr. Smith`, `e.g. this`),
 * nor inside a number still arriving (`3.` before `14`), nor, in German,
 * after an ordinal (`am 4. Mai`), so the normaliser sees each number and
 * title whole.
 */
import { cutAllowed } from './tags.js';

/** A boundary: sentence or clause punctuation (with closing quotes/brackets) followed by whitespace, or a line break. */
const BOUNDARY = /[.!?;:…]+["'”’)\]]*\s+|\n+/g;
/** A comma ends a clause only once the clause is long enough to be worth speaking alone. */
const COMMA = /,\s+/g;
const COMMA_MIN_CHARS = 60;
/**
 * Abbreviations whose full stop does not end a sentence: a cut after one would part it from what it
 * names. English, then those of the other languages the normaliser reads (`normalize/locales.ts`),
 * including the first letter of a spaced one (`z.` of `z. B.`).
 */
const NO_STOP =
  /(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|Prof|Mt|Capt|Gen|Lt|Sgt|No|vs|e\.g|i\.e|approx|Nr|Str|Hr|Fr|ca|Ca|bzw|evtl|inkl|vgl|Mio|Mrd|z|d|u|p|z\.\s?B|d\.\s?h|u\.\s?a|M|MM|Sr|Sra|Srta|Dra|Ud|Uds|p\.\s?(?:ej|ex|es)|Sig|Dott|Avda|Av|núm|n\.º|pag|Pag|tel|bijv|dhr|Dhr|mevr|Mevr|nr|env|d\.w\.z|o\.a)\.\s+$/u;
/** German writes ordinals with a full stop (`am 4. Mai`, `der 3. Platz`): no cut after one before a word. */
const GERMAN_ORDINAL = /(?:^|\s)\d{1,3}\.\s+$/u;

/**
 * Takes the complete clauses off the front of `text`.
 * Returns them (each with its trailing space) and the incomplete rest.
 */
export function takeClauses(text: string, language?: string): { clauses: string[]; rest: string } {
  const german = language !== undefined && /^de(?:-|$)/u.test(language);
  const clauses: string[] = [];
  let start = 0;
  const cuts: number[] = [];
  for (const match of text.matchAll(BOUNDARY)) cuts.push(match.index! + match[0].length);
  for (const match of text.matchAll(COMMA)) cuts.push(match.index! + match[0].length);
  cuts.sort((a, b) => a - b);
  for (const cut of cuts) {
    if (cut <= start || !cutAllowed(text, cut)) continue;
    const piece = text.slice(start, cut);
    if (NO_STOP.test(piece)) continue;
    // "am 4. " may be followed by its month: wait for the word after it (a letter next is a word).
    if (german && GERMAN_ORDINAL.test(piece) && (cut === text.length || /^\p{L}/u.test(text.slice(cut)))) continue;
    const isComma = /,\s+$/.test(piece) && !/[.!?;:…\n]["'”’)\]]*\s+$/.test(piece);
    if (isComma && piece.length < COMMA_MIN_CHARS) continue;
    if (piece.trim()) clauses.push(piece);
    start = cut;
  }
  return { clauses, rest: text.slice(start) };
}

/**
 * Where the speakable front of buffered text ends if a number may still be arriving: before a last
 * token with a digit in it and nothing after it (`$1,2` may become `$1,200`, `3.` may become `3.14`);
 * else the whole text.
 */
export function beforeUnfinishedNumber(text: string): number {
  const last = /[^\s]*$/u.exec(text)!;
  return /\d/u.test(last[0]) ? last.index : text.length;
}
