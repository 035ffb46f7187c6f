/**
 * @module captions/width
 * How wide text is on a screen, in display columns: East Asian wide and
 * fullwidth characters and emoji count 2, combining marks and other
 * zero-width characters 0, the rest 1, per grapheme. `string-width` and its
 * Unicode table (`get-east-asian-width`) do the counting.
 */
import { eastAsianWidth } from 'get-east-asian-width';
import stringWidth from 'string-width';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// Control characters are not stripped as ANSI escapes would be: a transcript has none that mean colour.
const OPTIONS = { countAnsiEscapeCodes: true } as const;

/** Whether a code point is East Asian wide or fullwidth. */
export function isWide(codePoint: number): boolean {
  return eastAsianWidth(codePoint) === 2;
}

/** Display columns of `text`. */
export function displayWidth(text: string): number {
  // Printable ASCII is one column a character: most text, with no segmenting.
  return PRINTABLE_ASCII.test(text) ? text.length : stringWidth(text, OPTIONS);
}

/** Whether `text` holds a wide character (text written without spaces between words). */
export function hasWide(text: string): boolean {
  for (const ch of text) if (isWide(ch.codePointAt(0)!)) return true;
  return false;
}

/** `text` cut into pieces no wider than `columns`, at grapheme boundaries (a word too long for any line). */
export function cutToWidth(text: string, columns: number): string[] {
  const pieces: string[] = [];
  let current = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment, OPTIONS);
    if (width + w > columns && current) {
      pieces.push(current);
      current = '';
      width = 0;
    }
    current += segment;
    width += w;
  }
  if (current) pieces.push(current);
  return pieces;
}
