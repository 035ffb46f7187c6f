/**
 * @module synthesis/normalize/localized
 * The normaliser for the languages with a table in `locales.ts`: one set of
 * rules — dates, times, phone numbers, money, percentages, units, ordinals,
 * ranges, numbers, abbreviations — made once per table from its separators,
 * names and phrasings. Like the English one it runs on mapped text
 * (`text-map.ts`): each rewritten token stands, as a whole, for the one it
 * replaced, so word timestamps name the words sent ("21", not
 * "einundzwanzig"). Where two rules match at one place the earliest match
 * wins, then the rule listed first.
 */
import { MappedText } from '../text-map.js';
import { DE_ENDINGS, localeFor, type Currency, type Gender, type Locale } from './locales.js';
import type { SayAs } from './english.js';
import { findMatches, rewrite, type Match, type Rule } from './rules.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&');
/** Characters for a class (`[…]`). */
const escapeClass = (text: string) => text.replace(/[\]\\^-]/gu, '\\$&');
const alternation = (words: Iterable<string>) => [...words].sort((a, b) => b.length - a.length).map(escape).join('|');

interface Parsed {
  negative: boolean;
  whole: bigint;
  /** Digits after the decimal separator, as written; undefined for none. */
  fraction?: string;
  /** Written with thousands separators. */
  grouped: boolean;
  digits: string;
}

/** The word before `index` in `text` ("am" in "am 4. Mai"). */
function wordBefore(text: string, index: number): string {
  return /([\p{L}]+)\s*$/u.exec(text.slice(Math.max(0, index - 24), index))?.[1] ?? '';
}

/** Whether what follows `end` starts a new sentence (or the text ends there). */
function endsSentence(text: string, end: number): boolean {
  return /^(?:\s*$|\s+["'“‘«(]?\p{Lu}|\s*\n)/u.test(text.slice(end));
}

/** Nouns a number labels rather than counts ("página 1", "capitolo 1"): the number after them is read as it is. */
const LABELS = new Set(['capítulo', 'página', 'número', 'artículo', 'tomo', 'versión', 'sección', 'paso', 'fase', 'nivel', 'capitolo', 'pagina', 'numero', 'articolo', 'versione', 'sezione', 'livello', 'piano']);

/** Abbreviations that often end a sentence: before a capital, their full stop is the sentence's. */
const SENTENCE_ENDS = new Set(['usw.', 'etc.', 'ecc.']);

class LocalNormalizer {
  readonly rules: Rule[];
  private readonly num: string;

  constructor(readonly locale: Locale) {
    const L = locale;
    const G = `[${escapeClass(L.groups)}]`;
    const D = escape(L.decimal);
    const NUM = String.raw`\d{1,3}(?:${G}\d{3})+(?:${D}\d+)?|\d+(?:${D}\d+)?`;
    this.num = NUM;
    const B = String.raw`(?<![\p{L}\p{N}_.,])`;
    const E = String.raw`(?![\p{L}\p{N}_])`;
    const NOT_AFTER = String.raw`(?![\p{N}]|[.,]\d)`;
    const months = new Map<string, number>();
    L.monthForms.forEach((forms, index) => forms.forEach((form) => months.set(form.toLowerCase(), index)));
    const MONTH = `(${alternation(months.keys())})`;
    const monthOf = (name: string) => months.get(name.toLowerCase()) ?? months.get(`${name.toLowerCase()}.`) ?? -1;
    const symbols = alternation(Object.keys(L.currencies));
    const units = alternation(Object.keys(L.units));
    const suffixes = L.ordinalSuffixes.map(([s]) => s);
    const sp = String.raw`[ \u00a0\u202f]`;
    const rule = (source: string, say: Rule['say'], flags = 'gu'): Rule => ({ pattern: new RegExp(source, flags), say });
    const dateOrNull = (d: number, m: number, y: string | undefined, before: string) =>
      d >= 1 && d <= 31 && m >= 0 && m <= 11 ? L.date(d, m, y === undefined ? null : Number(y.length === 2 ? `20${y}` : y), before) : null;

    this.rules = [
      // 2026-05-04
      rule(String.raw`${B}(\d{4})-(\d{2})-(\d{2})${E}`, (m, text) => dateOrNull(Number(m[3]), Number(m[2]) - 1, m[1], wordBefore(text, m.index))),
      // 04.05.2026, 4/5/2026, 03-12-2026: day first in every one of these languages.
      rule(String.raw`${B}(\d{1,2})([./-])(\d{1,2})\2(\d{4})${E}`, (m, text) => dateOrNull(Number(m[1]), Number(m[3]) - 1, m[4], wordBefore(text, m.index))),
      // German "4.5." without a year.
      ...(L.tag.startsWith('de') ? [rule(String.raw`${B}(\d{1,2})\.(\d{1,2})\.(?![\p{N}])`, (m, text) => dateOrNull(Number(m[1]), Number(m[2]) - 1, undefined, wordBefore(text, m.index)))] : []),
      // 4. Mai 2026, 1er mai, 4 de mayo de 2026, 3 december 2026
      rule(String.raw`${B}(\d{1,2})(?:\.|${alternation(suffixes.filter((s) => /^\.?[eéèºª°r]/u.test(s)))})?${sp}+(?:de${sp}+)?${MONTH}(?![\p{L}])(?:,?${sp}+(?:de${sp}+)?(\d{4})(?![\p{N}]))?`, (m, text) => {
        const month = monthOf(m[2]);
        return month < 0 ? null : dateOrNull(Number(m[1]), month, m[3], wordBefore(text, m.index));
      }, 'giu'),
      // Phone numbers: a country code or a leading 0, then groups.
      rule(String.raw`(?<![\p{L}\p{N}_+.,])(?:\+\d{1,3}|\(0\d{1,5}\)|0\d{1,5})(?:[ \u00a0./-]?\d+){1,6}(?![\p{N}]|[.,]\d)`, (m) => this.phone(m[0])),
      // 14:30, 14h30, 14h, 14.30 Uhr, 14 Uhr
      rule(String.raw`${B}(\d{1,2})(?::(\d{2})(?!:?\d)(?:${sp}?(?:Uhr|uur|h)${E})?|h(\d{2})?${E}|(?:\.(\d{2}))?${sp}?(?:Uhr|uur)${E})`, (m) => {
        const h = Number(m[1]);
        const min = Number(m[2] ?? m[3] ?? m[4] ?? 0);
        return h <= 24 && min <= 59 ? L.time(h, min) : null;
      }),
      // Money: the sign before or after the amount.
      rule(String.raw`(?<![\p{L}\p{N}_])([-−]?)(${symbols})${sp}?(${NUM})${NOT_AFTER}`, (m) => this.money(m[2], m[3], m[1] !== '')),
      rule(String.raw`${B}([-−]?)(${NUM})${sp}?(${symbols})(?![\p{L}\p{N}_])`, (m) => this.money(m[3], m[2], m[1] !== '')),
      // 25 %, 2,5%
      rule(String.raw`${B}([-−]?(?:${NUM}))${sp}?%`, (m) => `${this.decimal(m[1])} ${L.percent}`),
      // 20 °C, 5 km, 120 km/h
      rule(String.raw`${B}([-−]?(?:${NUM}))${sp}?(${units})(?![\p{L}\p{N}_²³])`, (m) => {
        const [one, many, gender] = L.units[m[2]];
        const parsed = this.parse(m[1]);
        if (!parsed) return null;
        const single = parsed.whole === 1n && parsed.fraction === undefined;
        const amount = parsed.fraction === undefined && !parsed.negative ? L.counted(parsed.whole, gender ?? 'm') : this.decimal(m[1]);
        return `${amount} ${single ? one : many}`;
      }),
      // 1er, 2e, 1.º, 3.ª, 1°, 21ste
      ...(suffixes.length ? [rule(String.raw`${B}(\d{1,4})(${alternation(suffixes)})(?![\p{L}\p{N}_])`, (m) => {
        const value = BigInt(m[1]);
        if (value === 0n) return null;
        const gender = L.ordinalSuffixes.find(([s]) => s === m[2])?.[1];
        const words = L.ordinal(value, gender);
        // Spanish "1.er", "3er": primer, tercer.
        return /^\.?er$/u.test(m[2]) && L.tag.startsWith('es') ? words.replace(/o$/u, '') : words;
      })] : []),
      // German: an ordinal after an article takes its ending ("der 3. Platz", "im 2. Stock").
      ...(L.tag.startsWith('de') ? [rule(String.raw`(?<=(?<![\p{L}])(${alternation(Object.keys(DE_ENDINGS))})${sp}+)(\d{1,3})\.(?=${sp}+\p{L})`, (m) => {
        const value = BigInt(m[2]);
        if (value === 0n) return null;
        const ending = DE_ENDINGS[m[1].toLowerCase()];
        const word = L.ordinal(value);
        return ending === 'e' ? word : word + ending.slice(1);
      }, 'giu')] : []),
      // 10–20
      rule(String.raw`${B}(${NUM})${sp}?[–-]${sp}?(${NUM})${NOT_AFTER}${E}`, (m) => {
        if (/^0\d/u.test(m[1]) || /^0\d/u.test(m[2])) return null;
        return `${this.number(m[1])} ${L.range} ${this.number(m[2])}`;
      }),
      // Any other number.
      rule(String.raw`${B}(?:(?<=^|[\s(\[])[-−])?(?:${NUM})${NOT_AFTER}`, (m, text) => this.number(m[0], text.slice(m.index + m[0].length), wordBefore(text, m.index))),
      // Abbreviations.
      rule(String.raw`(?<![\p{L}\p{N}_.])(${alternation(L.abbreviations.map(([w]) => w))})(?![\p{L}\p{N}_])`, (m, text) => {
        const entry = L.abbreviations.find(([w]) => w === m[1])!;
        const end = m.index + m[0].length;
        if (entry[2] === 'name' && !/^\s+[\p{Lu}\p{N}]/u.test(text.slice(end))) return null;
        // A full stop that ends the abbreviation ends the sentence too when one ends there.
        // ("usw." before a capital ends one; "z. B." before a name does not).
        const ends = /^\s*$|^\s*\n/u.test(text.slice(end)) || (SENTENCE_ENDS.has(m[1]) && endsSentence(text, end));
        return m[1].endsWith('.') && entry[2] !== 'name' && ends ? `${entry[1]}.` : entry[1];
      }),
    ];
  }

  /** A number as written in this language: sign, digits, separators. Null when it is not one. */
  parse(text: string): Parsed | null {
    const trimmed = text.trim();
    const negative = /^[-−]/u.test(trimmed);
    const body = trimmed.replace(/^[-−+]/u, '');
    const at = body.lastIndexOf(this.locale.decimal);
    const hasFraction = at >= 0 && !new RegExp(`^\\d{1,3}(?:[${escapeClass(this.locale.groups)}]\\d{3})+$`, 'u').test(body);
    const wholeText = hasFraction ? body.slice(0, at) : body;
    const digits = wholeText.replace(/[^\d]/gu, '');
    if (!/^\d*$/u.test(digits) || (!digits && !hasFraction)) return null;
    return { negative, whole: BigInt(digits || '0'), ...(hasFraction ? { fraction: body.slice(at + 1) } : {}), grouped: digits.length !== wholeText.length, digits };
  }

  private digitsSpoken(digits: string): string {
    return [...digits].map((d) => this.locale.cardinal(BigInt(d))).join(' ');
  }

  /** A number with its sign and decimals: "-3,14" → "minus drei Komma eins vier". */
  decimal(text: string): string {
    const parsed = this.parse(text);
    if (!parsed) return text;
    const L = this.locale;
    const parts: string[] = [];
    if (parsed.negative) parts.push(L.minus);
    parts.push(parsed.digits.length > 1 && parsed.digits.startsWith('0') && !parsed.grouped ? this.digitsSpoken(parsed.digits) : L.cardinal(parsed.whole));
    if (parsed.fraction !== undefined) {
      parts.push(L.decimalWord);
      const zeros = /^0*/u.exec(parsed.fraction)![0];
      const rest = parsed.fraction.slice(zeros.length);
      if (L.fractionAsNumber && rest.length > 0 && rest.length <= 3) {
        if (zeros) parts.push(this.digitsSpoken(zeros));
        parts.push(L.cardinal(BigInt(rest)));
      } else parts.push(this.digitsSpoken(parsed.fraction));
    }
    return parts.join(' ');
  }

  /**
   * A number on its own: a year when it looks like one, a count before a noun ("ein Apfel",
   * "veintiún libros") unless it labels the noun before it ("Kapitel 1 Absatz", "página 1 dice").
   */
  number(text: string, after = '', before = ''): string {
    const parsed = this.parse(text);
    if (!parsed) return text;
    const L = this.locale;
    if (parsed.fraction === undefined && !parsed.negative && !parsed.grouped && parsed.digits.length === 4 && parsed.whole >= 1100n && parsed.whole <= 2099n) return L.year(Number(parsed.whole));
    if (parsed.fraction === undefined && !parsed.negative && !(parsed.digits.length > 1 && parsed.digits.startsWith('0'))) {
      const noun = L.tag.startsWith('de')
        ? /^[ \u00a0]\p{Lu}\p{Ll}/u.test(after) && !/^\p{Lu}/u.test(before)
        : /^[ \u00a0]\p{Ll}{3,}/u.test(after) && /^(?:es|it)/u.test(L.tag) && !LABELS.has(before.toLowerCase());
      if (noun) return L.counted(parsed.whole, 'm');
    }
    return this.decimal(text);
  }

  /** Money: "3,50 €" → "drei Euro fünfzig"; null for no currency. */
  money(symbol: string, amount: string, negative: boolean): string | null {
    const L = this.locale;
    const currency: Currency | undefined = L.currencies[symbol];
    const parsed = this.parse(amount);
    if (!currency || !parsed) return null;
    const sign = negative ? `${L.minus} ` : '';
    const gender: Gender = currency.gender ?? 'm';
    if (parsed.fraction !== undefined && parsed.fraction.length !== 2) return `${sign}${this.decimal(amount)} ${currency.many}`;
    const cents = parsed.fraction === undefined ? 0 : Number(parsed.fraction);
    const major = `${L.counted(parsed.whole, gender)} ${parsed.whole === 1n ? currency.one : currency.many}`;
    const minorGender = currency.minorGender ?? 'm';
    const minor = `${L.counted(BigInt(cents), minorGender)} ${cents === 1 ? currency.minorOne : currency.minorMany}`;
    if (cents === 0) return sign + major;
    if (parsed.whole === 0n) return sign + minor;
    return sign + (L.moneyJoin === null ? `${major} ${L.cardinal(BigInt(cents))}` : `${major} ${L.moneyJoin} ${minor}`);
  }

  /** A phone number by its groups; French reads two-digit groups as numbers. Null for fewer than 6 digits. */
  phone(text: string): string | null {
    const groups = text.match(/\d+/gu) ?? [];
    const count = groups.join('').length;
    if (count < 6 || count > 15 || groups.length < 2 && !text.startsWith('+')) return null;
    const L = this.locale;
    const out: string[] = [];
    const plus = text.startsWith('+');
    groups.forEach((group, index) => {
      if (plus && index === 0) out.push(`${L.plus} ${L.cardinal(BigInt(group))}`);
      else if (L.phonePairs && group.length % 2 === 0) {
        const pairs = group.match(/\d\d/gu)!.map((pair) => (pair.startsWith('0') ? this.digitsSpoken(pair) : L.cardinal(BigInt(pair))));
        out.push(pairs.join(', '));
      } else out.push(this.digitsSpoken(group));
    });
    return out.join(', ');
  }

  /** Where the rules match `text`: earliest first, then by rule order; no two overlap. */
  matches(text: string): Match[] {
    if (!/[\d.%€$£°]|M{1,2}e|Mlle|Dr|Pr|bd|n°/u.test(text)) return [];
    return findMatches(text, this.rules);
  }

  normalizeMapped(input: MappedText): MappedText {
    return rewrite(input, this.matches(input.text));
  }

  /** An SSML `<say-as>` run in this language; null when the reading does not fit (it is then read as plain text). */
  sayAs(text: string, how: SayAs): string | null {
    const trimmed = text.trim();
    const L = this.locale;
    switch (how.interpretAs.toLowerCase()) {
      case 'cardinal':
      case 'number':
        return new RegExp(`^[-−]?(?:${this.num})$`, 'u').test(trimmed) ? this.decimal(trimmed) : null;
      case 'ordinal': {
        const m = /^(\d+)\D{0,3}$/u.exec(trimmed);
        return m && BigInt(m[1]) > 0n ? L.ordinal(BigInt(m[1])) : null;
      }
      case 'digits':
        return /\d/u.test(trimmed) ? this.digitsSpoken(trimmed.replace(/\D/gu, '')) : null;
      case 'telephone':
        return /\d/u.test(trimmed) ? (this.phone(trimmed.startsWith('+') ? trimmed : `0 ${trimmed}`.slice(2)) ?? this.digitsSpoken(trimmed.replace(/\D/gu, ''))) : null;
      default: {
        const said = this.normalizeMapped(MappedText.copied(trimmed, 0)).text;
        return said === trimmed ? null : said;
      }
    }
  }
}

const built = new Map<Locale, LocalNormalizer>();

/** The normaliser for a language tag; null for a language without a table (English has its own, `english.ts`). */
export function localNormalizer(tag: string): LocalNormalizer | null {
  const locale = localeFor(tag);
  if (!locale) return null;
  let normalizer = built.get(locale);
  if (!normalizer) built.set(locale, (normalizer = new LocalNormalizer(locale)));
  return normalizer;
}

export type { LocalNormalizer };
