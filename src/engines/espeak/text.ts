/**
 * @module engines/espeak/text
 * Makes plain text safe for eSpeak NG, which always reads SSML: markup
 * characters are escaped so they are read literally, NUL (which cuts the text
 * short) and other control characters become spaces. Keeps a map from the
 * escaped text's code points back to the original so eSpeak's word events
 * (1-based code-point positions) can name the words the user sent.
 */

export interface PreparedText {
  /** Text to hand to eSpeak. */
  text: string;
  /** For each code point of `text`, the index of the code point of the original it came from. */
  sourceIndex: Int32Array;
  /** The original's code points. */
  source: string[];
  /** For each code point of the original, where it starts in the original's UTF-16 code units. */
  sourceOffset: Int32Array;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * `continues`: the text is the head of a clause cut at a space (engines/sentences, splitHead). A
 * comma goes after it, so eSpeak ends it on a continuing pitch rather than a full stop's fall; the
 * comma maps to the text's last character, so no word event names it.
 */
export function prepareText(input: string, { continues = false }: { continues?: boolean } = {}): PreparedText {
  const source = [...input];
  const out: string[] = [];
  const sourceIndex: number[] = [];
  source.forEach((ch, i) => {
    const code = ch.codePointAt(0)!;
    let replacement = ch;
    if (ENTITIES[ch]) replacement = ENTITIES[ch];
    else if ((code < 0x20 && ch !== '\n' && ch !== '\t') || code === 0x7f) replacement = ' ';
    else if (ch === '\r') replacement = ' ';
    for (const piece of replacement) {
      out.push(piece);
      sourceIndex.push(i);
    }
  });
  if (continues && source.length > 0) {
    out.push(',');
    sourceIndex.push(source.length - 1);
  }
  const sourceOffset = new Int32Array(source.length);
  for (let i = 1; i < source.length; i++) sourceOffset[i] = sourceOffset[i - 1] + source[i - 1].length;
  return { text: out.join(''), sourceIndex: Int32Array.from(sourceIndex), source, sourceOffset };
}

/** The original code points an eSpeak word event (1-based position and length in prepared code points) covers. */
function sourceRange(prepared: PreparedText, position: number, length: number): { first: number; last: number } | null {
  const first = prepared.sourceIndex[position - 1];
  const last = prepared.sourceIndex[Math.min(position - 1 + Math.max(length, 1) - 1, prepared.sourceIndex.length - 1)];
  return first === undefined || last === undefined ? null : { first, last };
}

/** The original word for an eSpeak word event (1-based position and length in prepared code points). */
export function wordAt(prepared: PreparedText, position: number, length: number): string {
  const range = sourceRange(prepared, position, length);
  return range ? prepared.source.slice(range.first, range.last + 1).join('') : '';
}

/** Where an eSpeak word event stands in the original: `[from, to)` in UTF-16 code units; null if outside it. */
export function spanAt(prepared: PreparedText, position: number, length: number): { from: number; to: number } | null {
  const range = sourceRange(prepared, position, length);
  if (!range) return null;
  return { from: prepared.sourceOffset[range.first], to: prepared.sourceOffset[range.last] + prepared.source[range.last].length };
}
