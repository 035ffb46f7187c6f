/**
 * @module engines/espeak/text
 * Makes plain text safe for eSpeak NG, which always reads SSML and phoneme
 * input: markup characters are escaped so they are read literally, NUL
 * (which cuts the text short) and other control characters become spaces,
 * and `[[` (which would start phoneme input) is parted. Stretches to speak
 * as phonemes (SSML `<phoneme>`) become `[[…]]` with eSpeak's mnemonics.
 * Keeps a map from the prepared text's code points back to the original so
 * eSpeak's word events (1-based code-point positions) can name the words the
 * user sent: a phoneme stretch's code points all stand for its whole text.
 */

export interface PreparedText {
  /** Text to hand to eSpeak. */
  text: string;
  /** For each code point of `text`, the index of the code point of the original it came from. */
  sourceIndex: Int32Array;
  /** For each code point of `text`, the last code point of the original it stands for (past `sourceIndex` in a phoneme stretch). */
  sourceEnd: Int32Array;
  /** The original's code points. */
  source: string[];
  /** For each code point of the original, where it starts in the original's UTF-16 code units. */
  sourceOffset: Int32Array;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** A stretch of the text to speak as eSpeak phonemes: `[from, to)` in UTF-16 code units, and the mnemonics (`phonemes.ts`). */
export interface MnemonicSpan {
  from: number;
  to: number;
  mnemonics: string;
}

/**
 * `continues`: the text is the head of a clause cut at a space (engines/sentences, splitHead). A
 * comma goes after it, so eSpeak ends it on a continuing pitch rather than a full stop's fall; the
 * comma maps to the text's last character, so no word event names it. `phonemes`: stretches spoken
 * as phonemes, in text order, not overlapping.
 */
export function prepareText(input: string, { continues = false, phonemes = [] }: { continues?: boolean; phonemes?: readonly MnemonicSpan[] } = {}): PreparedText {
  const source = [...input];
  const sourceOffset = new Int32Array(source.length);
  for (let i = 1; i < source.length; i++) sourceOffset[i] = sourceOffset[i - 1] + source[i - 1].length;
  const out: string[] = [];
  const sourceIndex: number[] = [];
  const sourceEnd: number[] = [];
  const emit = (text: string, first: number, last: number): void => {
    for (const piece of text) {
      out.push(piece);
      sourceIndex.push(first);
      sourceEnd.push(last);
    }
  };
  let span = 0;
  for (let i = 0; i < source.length; i++) {
    const at = sourceOffset[i];
    while (span < phonemes.length && phonemes[span].to <= at) span++;
    const stretch = phonemes[span];
    if (stretch && stretch.from <= at) {
      // The stretch's code points: its brackets and mnemonics, each standing for all of them.
      let last = i;
      while (last + 1 < source.length && sourceOffset[last + 1] < stretch.to) last++;
      emit(`[[${stretch.mnemonics}]]`, i, last);
      i = last;
      span++;
      continue;
    }
    const ch = source[i];
    const code = ch.codePointAt(0)!;
    let replacement = ch;
    if (ENTITIES[ch]) replacement = ENTITIES[ch];
    else if ((code < 0x20 && ch !== '\n' && ch !== '\t') || code === 0x7f) replacement = ' ';
    else if (ch === '\r') replacement = ' ';
    // Text is never phoneme input: "[[" is read as two brackets.
    else if (ch === '[' && out.at(-1) === '[') replacement = ' [';
    emit(replacement, i, i);
  }
  if (continues && source.length > 0) emit(',', source.length - 1, source.length - 1);
  return { text: out.join(''), sourceIndex: Int32Array.from(sourceIndex), sourceEnd: Int32Array.from(sourceEnd), source, sourceOffset };
}

/** The original code points an eSpeak word event (1-based position and length in prepared code points) covers. */
function sourceRange(prepared: PreparedText, position: number, length: number): { first: number; last: number } | null {
  const first = prepared.sourceIndex[position - 1];
  const last = prepared.sourceEnd[Math.min(position - 1 + Math.max(length, 1) - 1, prepared.sourceEnd.length - 1)];
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
