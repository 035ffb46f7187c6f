/**
 * @module synthesis/normalize/numbers
 * English number words: integers and ordinals from `n2words` (American
 * English, no "and"; BigInt-safe), and what it does not read the way people
 * do — decimals digit by digit ("three point one four", where the library
 * says "point fourteen"), years in pairs ("nineteen ninety-nine"), digit
 * strings and clock times.
 */
import { toCardinal, toOrdinal } from 'n2words/en-US';

const DIGIT_NAMES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** Digits without grouping commas; null when it is not digits. */
function plainDigits(text: string): string | null {
  const digits = text.replace(/,/gu, '');
  return /^\d+$/u.test(digits) ? digits : null;
}

/** An integer written with digits (grouping commas allowed): "1,200" → "one thousand two hundred". */
export function cardinal(text: string): string {
  const digits = plainDigits(text);
  if (digits === null) return text;
  // A leading zero is read digit by digit ("007"); a lone 0 is "zero".
  if (digits.length > 1 && digits.startsWith('0')) return digitsSpoken(digits);
  return toCardinal(BigInt(digits));
}

/** "21" → "twenty-first"; 0 → "zeroth". */
export function ordinal(text: string): string {
  const digits = plainDigits(text);
  if (digits === null) return text;
  const value = BigInt(digits);
  return value === 0n ? 'zeroth' : toOrdinal(value);
}

/** Each digit by name: "0199" → "zero one nine nine". Other characters are left out. */
export function digitsSpoken(text: string): string {
  return [...text].filter((c) => c >= '0' && c <= '9').map((c) => DIGIT_NAMES[Number(c)]).join(' ');
}

/**
 * A number with an optional sign and decimals: "-3.14" → "minus three point one four",
 * "1,234.5" → "one thousand two hundred thirty-four point five", ".5" → "point five".
 */
export function decimal(text: string): string {
  const match = /^([-−+]?)(\d[\d,]*)?(?:\.(\d+))?$/u.exec(text.trim());
  if (!match || (match[2] === undefined && match[3] === undefined)) return text;
  const [, sign, whole, fraction] = match;
  const parts: string[] = [];
  if (sign === '-' || sign === '−') parts.push('minus');
  else if (sign === '+') parts.push('plus');
  if (whole !== undefined) parts.push(cardinal(whole));
  if (fraction !== undefined) parts.push('point', digitsSpoken(fraction));
  return parts.join(' ');
}

/** A four-digit year read in pairs: 1999 → "nineteen ninety-nine", 1900 → "nineteen hundred", 2005 → "two thousand five", 2026 → "twenty twenty-six". */
export function year(text: string): string {
  if (!/^\d{4}$/u.test(text)) return cardinal(text);
  const value = Number(text);
  const high = Math.floor(value / 100);
  const low = value % 100;
  if (value < 1000 || (value >= 2000 && value < 2010) || value % 1000 === 0) return cardinal(text);
  if (low === 0) return `${toCardinal(high)} hundred`;
  return `${toCardinal(high)} ${low < 10 ? `oh ${toCardinal(low)}` : toCardinal(low)}`;
}

/** Whether a bare four-digit number is read as a year (1100–2099). */
export function looksLikeYear(text: string): boolean {
  if (!/^\d{4}$/u.test(text)) return false;
  const value = Number(text);
  return value >= 1100 && value <= 2099;
}

/**
 * A clock time: hours, minutes, optional seconds and AM/PM. "2:30 PM" → "two thirty PM",
 * "2:05" → "two oh five", "2:00 pm" → "two PM", "2:00" → "two o'clock", "14:00" → "fourteen hundred".
 * Null when it is no time (hours over 24, minutes over 59).
 */
export function clockTime(hours: string, minutes: string | undefined, seconds: string | undefined, meridiem: string | undefined): string | null {
  const h = Number(hours);
  const m = minutes === undefined ? 0 : Number(minutes);
  if (h > 24 || m > 59 || (seconds !== undefined && Number(seconds) > 59)) return null;
  const suffix = meridiem ? ` ${meridiem.toLowerCase().startsWith('a') ? 'AM' : 'PM'}` : '';
  if (meridiem && (h === 0 || h > 12)) return null;
  const hourWords = toCardinal(h);
  let words: string;
  if (m === 0) words = meridiem ? hourWords : h > 12 || hours.length === 2 && hours.startsWith('0') ? `${hourWords} hundred` : `${hourWords} o'clock`;
  else words = `${hourWords} ${m < 10 ? `oh ${toCardinal(m)}` : toCardinal(m)}`;
  if (seconds !== undefined && Number(seconds) > 0) words += ` and ${toCardinal(Number(seconds))} ${Number(seconds) === 1 ? 'second' : 'seconds'}`;
  return words + suffix;
}
