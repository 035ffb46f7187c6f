/**
 * @module synthesis/normalize/english
 * The English text normaliser: numbers, money, times, dates, phone numbers,
 * percentages and units, common abbreviations, URLs and e-mail addresses
 * rewritten as the words people say, so the same text sounds the same on
 * every engine. It runs on mapped text (`text-map.ts`): each rewritten
 * token stands, as a whole, for the token it replaced, so word timestamps
 * still name the client's words. The rules are a table of patterns tried
 * at every position, earliest match first, then the rule listed first; the
 * fixture table (`fixtures.ts`) documents what each one says, and the tests
 * run it. `sayAs` reads an SSML `<say-as>` run the way it asks.
 */
import { MappedText } from '../text-map.js';
import { cardinal, clockTime, decimal, digitsSpoken, looksLikeYear, ordinal, year } from './numbers.js';
import { findMatches as findRules, rewrite, type Match, type Rule as SharedRule } from './rules.js';

/** No letter, digit or underscore before the match. */
const B = String.raw`(?<![\p{L}\p{N}_])`;
/** No letter, digit or underscore after the match. */
const E = String.raw`(?![\p{L}\p{N}_])`;
/** AM or PM: "pm", "PM" or "p.m." (a full stop after "PM" is left to the sentence). */
const MERIDIEM = String.raw`([AaPp])(?:[Mm]|\.[Mm]\.)(?![\p{L}\p{N}])`;
/** A number: digits with optional grouping commas and decimals. */
const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_PATTERN = String.raw`(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)`;

function monthIndex(name: string): number {
  return MONTHS.findIndex((m) => m.toLowerCase().startsWith(name.toLowerCase().slice(0, 3)));
}

const CURRENCIES: Record<string, { one: string; many: string; cent: string; cents: string }> = {
  $: { one: 'dollar', many: 'dollars', cent: 'cent', cents: 'cents' },
  USD: { one: 'dollar', many: 'dollars', cent: 'cent', cents: 'cents' },
  '€': { one: 'euro', many: 'euros', cent: 'cent', cents: 'cents' },
  EUR: { one: 'euro', many: 'euros', cent: 'cent', cents: 'cents' },
  '£': { one: 'pound', many: 'pounds', cent: 'penny', cents: 'pence' },
  GBP: { one: 'pound', many: 'pounds', cent: 'penny', cents: 'pence' },
  '¥': { one: 'yen', many: 'yen', cent: 'sen', cents: 'sen' },
  JPY: { one: 'yen', many: 'yen', cent: 'sen', cents: 'sen' },
};

const SCALES: Record<string, string> = { k: 'thousand', K: 'thousand', thousand: 'thousand', m: 'million', M: 'million', million: 'million', bn: 'billion', B: 'billion', billion: 'billion', trillion: 'trillion' };

/** Units after a number: singular, plural. */
const UNITS: Record<string, [string, string]> = {
  km: ['kilometer', 'kilometers'], cm: ['centimeter', 'centimeters'], mm: ['millimeter', 'millimeters'],
  kg: ['kilogram', 'kilograms'], g: ['gram', 'grams'], mg: ['milligram', 'milligrams'],
  lb: ['pound', 'pounds'], lbs: ['pound', 'pounds'], oz: ['ounce', 'ounces'], ft: ['foot', 'feet'], mi: ['mile', 'miles'],
  mph: ['mile per hour', 'miles per hour'], 'km/h': ['kilometer per hour', 'kilometers per hour'], kph: ['kilometer per hour', 'kilometers per hour'],
  '°C': ['degree Celsius', 'degrees Celsius'], '°F': ['degree Fahrenheit', 'degrees Fahrenheit'], '°': ['degree', 'degrees'],
  KB: ['kilobyte', 'kilobytes'], MB: ['megabyte', 'megabytes'], GB: ['gigabyte', 'gigabytes'], TB: ['terabyte', 'terabytes'],
  ms: ['millisecond', 'milliseconds'], min: ['minute', 'minutes'], hrs: ['hour', 'hours'], sec: ['second', 'seconds'],
  Hz: ['hertz', 'hertz'], kHz: ['kilohertz', 'kilohertz'], MHz: ['megahertz', 'megahertz'], GHz: ['gigahertz', 'gigahertz'],
  W: ['watt', 'watts'], kW: ['kilowatt', 'kilowatts'], kWh: ['kilowatt hour', 'kilowatt hours'], V: ['volt', 'volts'],
  mL: ['milliliter', 'milliliters'], ml: ['milliliter', 'milliliters'], L: ['liter', 'liters'],
};
const UNIT_PATTERN = Object.keys(UNITS).sort((a, b) => b.length - a.length).map((u) => u.replace(/[/]/gu, '\\/')).join('|');

/** Abbreviations with a full stop: what they say, and whether they are a title (never end a sentence). */
const ABBREVIATIONS: Record<string, { say: string; title?: boolean }> = {
  'Mr.': { say: 'Mister', title: true }, 'Mrs.': { say: 'Missus', title: true }, 'Ms.': { say: 'Miz', title: true },
  'Prof.': { say: 'Professor', title: true }, 'Gen.': { say: 'General', title: true }, 'Capt.': { say: 'Captain', title: true },
  'Sgt.': { say: 'Sergeant', title: true }, 'Lt.': { say: 'Lieutenant', title: true }, 'Gov.': { say: 'Governor', title: true },
  'Sen.': { say: 'Senator', title: true }, 'Rep.': { say: 'Representative', title: true }, 'Mt.': { say: 'Mount', title: true },
  'Jr.': { say: 'Junior' }, 'Sr.': { say: 'Senior' }, 'Ave.': { say: 'Avenue' }, 'Blvd.': { say: 'Boulevard' }, 'Rd.': { say: 'Road' },
  'Inc.': { say: 'Incorporated' }, 'Ltd.': { say: 'Limited' }, 'Corp.': { say: 'Corporation' }, 'Dept.': { say: 'Department' },
  'e.g.': { say: 'for example' }, 'i.e.': { say: 'that is' }, 'etc.': { say: 'et cetera' }, 'vs.': { say: 'versus' }, 'approx.': { say: 'approximately' },
};
const ABBREVIATION_PATTERN = [...Object.keys(ABBREVIATIONS), 'Dr.', 'St.'].sort((a, b) => b.length - a.length).map((a) => a.replace(/\./gu, '\\.')).join('|');

/** Money: "$5.50" → "five dollars and fifty cents"; "$1.5 million" → "one point five million dollars". Null for no currency. */
export function money(symbol: string, amount: string, scale?: string): string | null {
  const currency = CURRENCIES[symbol] ?? CURRENCIES[symbol.toUpperCase()];
  if (!currency) return null;
  const [whole, fraction] = amount.replace(/,/gu, '').split('.');
  if (scale) return `${decimal(amount)} ${SCALES[scale] ?? scale} ${currency.many}`;
  if (fraction !== undefined && fraction.length !== 2) return `${decimal(amount)} ${currency.many}`;
  const units = BigInt(whole || '0');
  const cents = fraction === undefined ? 0 : Number(fraction);
  const parts: string[] = [];
  if (units > 0n || cents === 0) parts.push(`${cardinal(whole || '0')} ${units === 1n ? currency.one : currency.many}`);
  if (cents > 0) parts.push(`${cardinal(String(cents))} ${cents === 1 ? currency.cent : currency.cents}`);
  return parts.join(' and ');
}

/** A date from its parts (any may be missing): "December third, twenty twenty-six". */
function dateWords(month: number | null, day: number | null, yearText: string | null): string | null {
  if (month !== null && (month < 0 || month > 11)) return null;
  if (day !== null && (day < 1 || day > 31)) return null;
  const parts: string[] = [];
  if (month !== null) parts.push(MONTHS[month]);
  if (day !== null) parts.push(ordinal(String(day)));
  let words = parts.join(' ');
  if (yearText !== null) words = words ? `${words}, ${year(yearText)}` : year(yearText);
  return words || null;
}

/** A phone number: its digit groups read digit by digit, with a pause between groups; a leading + is "plus". */
export function telephone(text: string): string {
  const groups = text.match(/\d+/gu) ?? [];
  const spoken = groups.map(digitsSpoken).join(', ');
  return text.trim().startsWith('+') ? `plus ${spoken}` : spoken;
}

const SYMBOLS: Record<string, string> = { '.': 'dot', '/': 'slash', '-': 'dash', _: 'underscore', '?': 'question mark', '=': 'equals', '&': 'and', '#': 'hash', ':': 'colon', '@': 'at', '%': 'percent', '~': 'tilde', '+': 'plus' };

/** A URL or e-mail address as people read one: "example dot com slash a". The scheme is left out; numbers of up to four digits are read as numbers, longer ones digit by digit. */
export function address(text: string): string {
  const body = text.replace(/^[a-z][a-z0-9+.-]*:\/\//iu, '').replace(/\/$/u, '');
  const out: string[] = [];
  for (const piece of body.match(/[\p{L}]+|\d+|[^\p{L}\d]/gu) ?? []) {
    if (/^\d+$/u.test(piece)) out.push(piece.length <= 4 ? cardinal(piece) : digitsSpoken(piece));
    else if (/^www$/iu.test(piece)) out.push('w w w');
    else if (SYMBOLS[piece]) out.push(SYMBOLS[piece]);
    else if (/\p{L}/u.test(piece)) out.push(piece);
  }
  return out.join(' ');
}

/** A number that may be a year: years in pairs (1100–2099, no commas), everything else as a cardinal or decimal. */
function number(text: string): string {
  return looksLikeYear(text) ? year(text) : decimal(text);
}

interface Rule extends SharedRule {
  name: string;
}

const rule = (name: string, source: string, say: Rule['say'], flags = 'gu'): Rule => ({ name, pattern: new RegExp(source, flags), say });

/** Whether what follows `end` starts a new sentence (or the text ends there). */
function endsSentence(text: string, end: number): boolean {
  return /^(?:\s*$|\s+["'“‘(]?\p{Lu}|\s*\n)/u.test(text.slice(end));
}

/** The rules, in order of precedence where two match at the same place. */
const RULES: Rule[] = [
  rule('url', String.raw`${B}(?:https?:\/\/|www\.)[^\s<>"]*[^\s<>".,;:!?)\]'"]`, (m) => address(m[0]), 'giu'),
  rule('email', String.raw`${B}[\w.+-]+@[\w-]+(?:\.[\w-]+)+${E}`, (m) => address(m[0])),
  rule('domain', String.raw`${B}[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|ai|co|edu|gov|uk|de)(?:\/[^\s<>"]*[^\s<>".,;:!?)\]'"])?${E}`, (m) => address(m[0]), 'giu'),
  rule('phone', String.raw`(?<![\p{L}\p{N}_+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[.-]\d{4}${E}|${B}\d{3}-\d{4}${E}`, (m) => telephone(m[0])),
  rule('iso date', String.raw`${B}(\d{4})-(\d{2})-(\d{2})${E}`, (m) => dateWords(Number(m[2]) - 1, Number(m[3]), m[1])),
  rule('month day', String.raw`${B}${MONTH_PATTERN}\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?${E}`, (m) => dateWords(monthIndex(m[1]), Number(m[2]), m[3] ?? null)),
  rule('day month', String.raw`${B}(\d{1,2})(?:st|nd|rd|th)?\s+${MONTH_PATTERN}\.?(?:,?\s+(\d{4}))?${E}`, (m) => {
    const words = dateWords(null, Number(m[1]), null);
    return words && `the ${words} of ${MONTHS[monthIndex(m[2])]}${m[3] ? `, ${year(m[3])}` : ''}`;
  }),
  rule('slashed date', String.raw`${B}(\d{1,2})\/(\d{1,2})\/(\d{4})${E}`, (m) => dateWords(Number(m[1]) - 1, Number(m[2]), m[3])),
  rule('time', String.raw`${B}(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s?${MERIDIEM})?(?![\p{N}])`, (m, text) => stopAfterDots(clockTime(m[1], m[2], m[3], m[4]), m, text)),
  rule('hour', String.raw`${B}(\d{1,2})\s?${MERIDIEM}`, (m, text) => stopAfterDots(clockTime(m[1], undefined, undefined, m[2]), m, text)),
  rule('money', String.raw`(?<![\p{L}\p{N}_])([-−]?)([$€£¥])\s?(${NUM})(?:\s?(thousand|million|billion|trillion|bn|[kKmMB])${E})?`, (m) => {
    const said = money(m[2], m[3], m[4]);
    return said && (m[1] ? `minus ${said}` : said);
  }),
  rule('money code', String.raw`${B}(${NUM})\s?(USD|EUR|GBP|JPY)${E}`, (m) => money(m[2], m[1])),
  rule('percent', String.raw`(?<![\p{L}\p{N}_.,])([-−]?(?:${NUM}))\s?%`, (m) => `${decimal(m[1])} percent`),
  rule('unit', String.raw`(?<![\p{L}\p{N}_.,])([-−]?(?:${NUM}))\s?(${UNIT_PATTERN})(?![\p{L}\p{N}_])`, (m) => {
    const [one, many] = UNITS[m[2]];
    return `${decimal(m[1])} ${m[1] === '1' ? one : many}`;
  }),
  rule('ordinal', String.raw`${B}(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)${E}`, (m) => ordinal(m[1]), 'giu'),
  rule('range', String.raw`(?<![\p{L}\p{N}_.,])(${NUM})\s?[-–—]\s?(${NUM})(?![\p{N}.,]\d)${E}`, (m) => `${number(m[1])} to ${number(m[2])}`),
  rule('number sign', String.raw`(?<![\p{L}\p{N}_])#(\d+)${E}`, (m) => `number ${cardinal(m[1])}`),
  rule('No.', String.raw`${B}No\.\s?(?=\d)`, () => 'number '),
  rule('number', String.raw`(?<![\p{L}\p{N}_.,])(?:(?<=^|[\s(\[])[-−])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\p{N}]|[.,]\d)`, (m) => number(m[0].replace(/^[-−]/u, '-'))),
  rule('abbreviation', String.raw`(?<![\p{L}\p{N}_.])(?:${ABBREVIATION_PATTERN})(?![\p{L}\p{N}_])`, (m, text) => {
    const end = m.index + m[0].length;
    const next = text.slice(end);
    const nameFollows = /^\s+\p{Lu}/u.test(next);
    if (m[0] === 'Dr.') return nameFollows || !/\p{Lu}[\p{L}]*\s+$/u.test(text.slice(0, m.index)) ? 'Doctor' : withStop('Drive', text, end);
    if (m[0] === 'St.') return nameFollows ? 'Saint' : withStop('Street', text, end);
    const entry = ABBREVIATIONS[m[0]];
    return entry.title ? entry.say : withStop(entry.say, text, end);
  }),
  rule('ampersand', String.raw`(?<=\s)&(?=\s)`, () => 'and'),
];

/** "a.m."/"p.m.": the full stop that ends them also ends a sentence that ends there. */
function stopAfterDots(words: string | null, m: RegExpExecArray, text: string): string | null {
  return words !== null && m[0].endsWith('.') ? withStop(words, text, m.index + m[0].length) : words;
}

/** An expansion that took a full stop keeps it when the sentence ends there. */
function withStop(words: string, text: string, end: number): string {
  return endsSentence(text, end) ? `${words}.` : words;
}

/**
 * The matches of recent texts. Callers repeat the same prompts (the audio cache exists for them),
 * and running every rule over a text is most of a cache hit's text work (≈ 13 µs of ≈ 190 for a
 * short sentence). The result depends on the text alone; a Map kept in insertion order drops the
 * oldest entry once full, and only short texts are kept.
 */
const recent = new Map<string, readonly Match[]>();
const RECENT_MAX = 512;
const RECENT_MAX_CHARS = 400;

/** Where the rules match `text`: earliest first, then by rule order; no two overlap. */
function matches(text: string): readonly Match[] {
  if (text.length > RECENT_MAX_CHARS) return findMatches(text);
  const known = recent.get(text);
  if (known) return known;
  const found = findMatches(text);
  if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!);
  recent.set(text, Object.freeze(found));
  return found;
}

function findMatches(text: string): Match[] {
  if (!/[\d@&.$€£¥#%]/u.test(text)) return [];
  return findRules(text, RULES);
}

/** The spoken form of plain English text. */
export function normalizeText(text: string): string {
  return normalizeMapped(MappedText.copied(text, 0)).text;
}

/** `normalizeText` on mapped text: each rewritten token stands, as a whole, for the one it replaced. */
export function normalizeMapped(input: MappedText): MappedText {
  return rewrite(input, matches(input.text));
}

/** SSML `say-as` readings that are not spelling (`characters` and `spell-out` are spelled, like `<spell>`). */
export type SayAs = { interpretAs: string; format?: string; detail?: string };

/** Date parts in the order `format` names them (`mdy`, `dmy`, `ymd`, `md`, `dm`, `ym`, `my`, `d`, `m`, `y`, or `yyyymmdd`). */
function sayDate(text: string, format: string | undefined): string | null {
  const order = (format ?? 'mdy').toLowerCase();
  const trimmed = text.trim();
  // "20261203" and the like: split by the format's field widths.
  let fields = trimmed.split(/[-/.\s,]+/u).filter(Boolean);
  if (fields.length === 1 && /^\d{8}$/u.test(trimmed) && order.replace(/y+/u, 'y').replace(/m+/u, 'm').replace(/d+/u, 'd') === 'ymd') fields = [trimmed.slice(0, 4), trimmed.slice(4, 6), trimmed.slice(6)];
  const letters = order.replace(/y+/u, 'y').replace(/m+/u, 'm').replace(/d+/u, 'd');
  if (fields.length !== letters.length) return null;
  let month: number | null = null;
  let day: number | null = null;
  let yearText: string | null = null;
  for (const [i, letter] of [...letters].entries()) {
    const field = fields[i];
    if (letter === 'm') month = /^\d+$/u.test(field) ? Number(field) - 1 : monthIndex(field);
    else if (letter === 'd') day = Number(field.replace(/(st|nd|rd|th)$/iu, ''));
    else if (letter === 'y') yearText = field.length === 2 ? `20${field}` : field;
    else return null;
    if (letter !== 'm' && !/^\d+/u.test(field)) return null;
  }
  if (yearText !== null && !/^\d{4}$/u.test(yearText)) return null;
  const words = dateWords(month, day, yearText);
  if (words === null) return null;
  // A day alone is "the third".
  return month === null && yearText === null ? `the ${words}` : words;
}

/** What an SSML `<say-as>` run says; null when the reading does not fit the text (it is then read as plain text). */
export function sayAs(text: string, how: SayAs): string | null {
  const trimmed = text.trim();
  switch (how.interpretAs.toLowerCase()) {
    case 'cardinal':
    case 'number': {
      const clean = trimmed.replace(/\s+/gu, '');
      return /^[-−+]?(?:\d[\d,]*)?(?:\.\d+)?$/u.test(clean) && /\d/u.test(clean) ? decimal(clean.replace(/^−/u, '-')) : null;
    }
    case 'ordinal': {
      const m = /^(\d[\d,]*)(?:st|nd|rd|th|\.)?$/iu.exec(trimmed);
      return m ? ordinal(m[1]) : null;
    }
    case 'digits':
      return /\d/u.test(trimmed) ? digitsSpoken(trimmed) : null;
    case 'telephone':
      return /\d/u.test(trimmed) ? telephone(trimmed) : null;
    case 'date':
      return sayDate(trimmed, how.format);
    case 'time': {
      const m = /^(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))?\s*(?:([AaPp])\.?[Mm]\.?)?$/u.exec(trimmed);
      return m ? clockTime(m[1], m[2], m[3], m[4]) : null;
    }
    case 'currency': {
      const m = /^([-−]?)(?:([$€£¥]|USD|EUR|GBP|JPY)\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?([$€£¥]|USD|EUR|GBP|JPY))$/u.exec(trimmed);
      if (!m) return null;
      const said = money(m[2] ?? m[5], m[3] ?? m[4]);
      return said && (m[1] ? `minus ${said}` : said);
    }
    case 'fraction': {
      const m = /^(\d+)\s*\/\s*(\d+)$/u.exec(trimmed);
      if (!m) return null;
      const [n, d] = [m[1], m[2]];
      if (d === '2') return `${cardinal(n)} ${n === '1' ? 'half' : 'halves'}`;
      if (d === '4') return `${cardinal(n)} ${n === '1' ? 'quarter' : 'quarters'}`;
      return `${cardinal(n)} ${ordinal(d)}${n === '1' ? '' : 's'}`;
    }
    case 'unit':
      return normalizeText(trimmed);
    default:
      return null;
  }
}
