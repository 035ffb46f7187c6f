/**
 * @module synthesis/split
 * Cuts a long text into pieces no longer than a model's per-request limit
 * (in Unicode code points, as the server counts), at sentence boundaries
 * where it can: clauses from the synthesis clause splitter are packed
 * greedily, a piece ends at its last sentence end when one fits, and only a
 * single overlong clause is cut at a space (or, with none, mid-word).
 */
import { takeClauses } from './clauses.js';

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
