/**
 * @module synthesis/split
 * Cuts a long text into pieces no longer than a model's per-request limit
 * (in Unicode code points, as the server counts), at sentence boundaries
 * where it can: clauses from the synthesis clause splitter are packed
 * greedily, a piece ends at its last sentence end when one fits, and only a
 * single overlong clause is cut at a space (or, with none, mid-word).
 */
import { takeClauses } from './clauses.js';
import { cutAllowed } from './tags.js';

const SENTENCE_END = /[.!?…]["'”’)\]]*\s+$|\n\s*$/;

function length(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Splits one clause longer than `max` at spaces, or hard at `max` code points. */
function splitLong(clause: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = [...clause];
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut <= 0) cut = max;
    else cut += 1;
    pieces.push(rest.slice(0, cut).join(''));
    rest = rest.slice(cut);
  }
  if (rest.length) pieces.push(rest.join(''));
  return pieces;
}

export function splitText(text: string, max: number): string[] {
  const { clauses, rest } = takeClauses(text);
  if (rest.trim()) clauses.push(rest);
  const units = clauses.flatMap((c) => (length(c) > max ? splitLong(c, max) : [c]));
  const pieces: string[] = [];
  let current: string[] = [];
  let size = 0;
  const flush = (count: number) => {
    const piece = current.slice(0, count).join('');
    if (piece.trim()) pieces.push(piece.trim());
    current = current.slice(count);
    size = current.reduce((n, u) => n + length(u), 0);
  };
  for (const unit of units) {
    const n = length(unit);
    if (size + n > max && current.length) {
      // Prefer to end the piece at its last full sentence; carry the clauses after it over.
      let last = current.length;
      for (let i = current.length; i > 0; i--) {
        if (SENTENCE_END.test(current[i - 1])) {
          last = i;
          break;
        }
      }
      flush(last);
      if (size + n > max) flush(current.length);
    }
    current.push(unit);
    size += n;
  }
  flush(current.length);
  return pieces;
}

export { length as codePoints };

/**
 * Cuts `text` into consecutive slices of at most `max` code points that join back into exactly
 * `text` (every character kept, so the slices' characters sum to the text's): each ends at the
 * last sentence end that fits, else the last space, else at `max`; never inside a tag or a
 * `<spell>` run (a tag longer than `max` is kept whole), nor between the halves of a surrogate pair.
 */
export function sliceText(text: string, max: number): string[] {
  const slices: string[] = [];
  let rest = text;
  while (length(rest) > max) {
    // `max` code points are at most 2·max code units: find the code unit where they end.
    let end = 0;
    for (let n = 0; n < max; n++) end += rest.codePointAt(end)! > 0xffff ? 2 : 1;
    const head = rest.slice(0, end);
    const allowed = (cut: number) => cut > 0 && cutAllowed(rest, cut);
    let cut = -1;
    for (const match of head.matchAll(/[.!?…]["'”’)\]]*\s+|\n+/g)) if (allowed(match.index! + match[0].length)) cut = match.index! + match[0].length;
    if (cut <= 0) for (const match of head.matchAll(/\s+/g)) if (allowed(match.index! + match[0].length)) cut = match.index! + match[0].length;
    if (cut <= 0) {
      // No space outside a tag: at the limit, or past a tag that the limit would cut (longer than it).
      cut = end;
      while (cut < rest.length && !cutAllowed(rest, cut)) cut++;
    }
    slices.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) slices.push(rest);
  return slices;
}
