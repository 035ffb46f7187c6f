/**
 * @module captions/width
 * How wide text is on a screen, in display columns: East Asian wide and
 * fullwidth characters (CJK ideographs, kana, Hangul, fullwidth forms) and
 * emoji count 2, combining marks and other zero-width characters 0, the rest
 * 1. Counted per grapheme (`Intl.Segmenter`), so a letter with its accents or
 * an emoji sequence is one character on screen.
 */

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Code point ranges of East Asian Width W and F (Unicode's EastAsianWidth.txt, the blocks text uses). */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initials
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x2e80, 0x303e], // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
  [0x3041, 0x33ff], // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed, compatibility
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xa960, 0xa97f], // Hangul Jamo extended A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small forms
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6],
  [0x16fe0, 0x18cff], // Tangut and ideographic symbols
  [0x1b000, 0x1b2ff], // Kana supplement and extended
  [0x1f200, 0x1f2ff], // enclosed ideographic supplement
  [0x20000, 0x3fffd], // CJK extensions B onwards
];

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}]+$/u;
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F/u;

/** Whether a code point is East Asian wide or fullwidth. */
export function isWide(codePoint: number): boolean {
  let low = 0;
  let high = WIDE.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [from, to] = WIDE[middle];
    if (codePoint < from) high = middle - 1;
    else if (codePoint > to) low = middle + 1;
    else return true;
  }
  return false;
}

/** Display columns of one grapheme. */
function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  if (EMOJI.test(grapheme)) return 2;
  return isWide(grapheme.codePointAt(0)!) ? 2 : 1;
}

/** Display columns of `text`. */
export function displayWidth(text: string): number {
  // Printable ASCII is one column a character: most text, with no segmenting.
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
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
    const w = graphemeWidth(segment);
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
