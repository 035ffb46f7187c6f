/**
 * @module synthesis/characters
 * The unit of limits and billing: a character is a Unicode code point.
 */

/** Counts Unicode code points, the unit of limits and billing (not UTF-16 units). */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
