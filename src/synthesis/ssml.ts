/**
 * @module synthesis/ssml
 * SSML input (the subset Polly, Azure, Google and Twilio `<Say>` users
 * send), read into the same segments as Cartesia's inline tags (`tags.ts`):
 * text runs with their speed, volume, spelling or `say-as` reading, each
 * mapped back to the transcript (`text-map.ts`), silences and marks. The
 * XML is parsed by `saxes` (strict, with positions); a document it refuses,
 * a DOCTYPE, an `<audio>` element, nesting deeper than `MAX_DEPTH` or more
 * than `MAX_ELEMENTS` elements is 400 `invalid_ssml` with the line and
 * column, before anything is spoken or billed. Unknown elements speak their
 * text, as the anchors' do.
 *
 * `<phoneme>` gives its text run phonemes (its `ph` in `ipa` or `x-sampa`,
 * read into normalised IPA by `engines/phonemes.ts`): an engine that takes
 * phonemes speaks them, any other speaks the text. A `ph` that cannot be
 * read, or an alphabet other than those two, is `invalid_ssml` at the
 * element, as Polly refuses it. `<lang xml:lang>` (and `xml:lang` on `<p>`
 * and `<s>`) gives the runs inside it their language; a tag that is not
 * BCP 47 in shape is left out, so the text is spoken as around it.
 *
 * Also here: what an SSML transcript counts for limits and billing (its
 * spoken text, not its markup) and which of its characters are markup, so
 * word timestamps name the words of its text content.
 */
import { SaxesParser, type SaxesTag } from 'saxes';
import { normalisePhonemes, PhonemeError } from '../engines/phonemes.js';
import { ApiError } from '../errors/api-error.js';
import { countCharacters } from './characters.js';
import type { SayAs } from './normalize/english.js';
import type { MappedTagSegment } from './tags.js';
import { MappedText } from './text-map.js';

/** Deepest element nesting accepted. */
export const MAX_DEPTH = 32;
/** Most elements one document may have. */
export const MAX_ELEMENTS = 5_000;
/** Longest `<break>`; a longer time is cut to it (Polly's maximum). */
export const MAX_BREAK_SECONDS = 10;

/** `<break strength>` and the pause `<break/>` (medium) makes. */
const BREAK_STRENGTH: Record<string, number> = { none: 0, 'x-weak': 0.1, weak: 0.25, medium: 0.4, strong: 0.7, 'x-strong': 1 };
/** The pause around a paragraph and a sentence element. */
const PARAGRAPH_PAUSE = 0.5;
const SENTENCE_PAUSE = 0.25;
/** `<prosody rate>` keywords, as a speaking-rate multiplier. */
const RATES: Record<string, number> = { 'x-slow': 0.5, slow: 0.75, medium: 1, default: 1, fast: 1.25, 'x-fast': 1.5 };
/** `<prosody volume>` keywords, in dB (silent is no sound). */
const VOLUMES_DB: Record<string, number> = { 'x-soft': -12, soft: -6, medium: 0, default: 0, loud: 4, 'x-loud': 8 };
/** Loudest gain SSML may ask for on top of the voice's level (+12 dB). */
const MAX_VOLUME = 4;
/** `<emphasis level>`: rate and volume multipliers. */
const EMPHASIS: Record<string, { speed: number; volume: number }> = {
  strong: { speed: 0.9, volume: 1.26 },
  moderate: { speed: 0.95, volume: 1.12 },
  none: { speed: 1, volume: 1 },
  reduced: { speed: 1.1, volume: 0.79 },
};
/** `say-as` readings spoken letter by letter, as `<spell>`. */
const SPELLED = new Set(['characters', 'spell-out', 'verbatim', 'letters']);
/** Elements that separate the words on either side, as a space does. */
const SEPARATING = new Set(['speak', 'p', 's', 'break', 'paragraph', 'sentence']);

/** Markup of an SSML transcript, for word timestamps: removed, or (an entity) standing for the character it means. */
export interface MarkupRange {
  index: number;
  length: number;
  /** Ends the word before it (a `<break>`, a paragraph or sentence boundary). */
  pause: boolean;
  /** What it stands for in the text (an entity's character); absent: nothing. */
  text?: string;
}

export interface SsmlReading {
  segments: MappedTagSegment[];
  /** Characters for limits and billing (see `docs/billing.md`). */
  characters: number;
  markup: MarkupRange[];
}

/** A transcript is SSML when it says so, or when its first non-space characters are `<speak`. */
export function isSsml(transcript: string, type?: 'text' | 'ssml'): boolean {
  if (type) return type === 'ssml';
  return /^\s*<speak[\s>/]/u.test(transcript);
}

interface Frame {
  name: string;
  speed: number;
  volume: number;
  /** The `<prosody pitch>` in force, as a multiplier of the voice's pitch. */
  pitch: number;
  spell: boolean;
  /** Inside `<say-as>` with a reading other than spelling: its text is gathered and read as a whole. */
  sayAs: { how: SayAs; text: MappedText } | null;
  /** Inside `<sub alias>`: the alias is spoken for the text, which stands for it. */
  sub: { alias: string; from: number; to: number } | null;
  /** Inside `<phoneme>`: its text is gathered and spoken as a whole, as these phonemes where the engine takes them. */
  phoneme: { ipa: string; text: MappedText } | null;
  /** The `xml:lang` in force from `<lang>`, `<p>` or `<s>` (lower case); null: the voice's own. */
  language: string | null;
}

/** A BCP 47 tag in shape (language, then subtags), `_` read as `-`; null for anything else. */
export function languageTag(value: string): string | null {
  const tag = value.trim().replace(/_/gu, '-').toLowerCase();
  return /^[a-z]{2,3}(?:-[a-z0-9]{1,8})*$/u.test(tag) ? tag : null;
}

const ENTITY = /&(?:#x([0-9a-f]+)|#(\d+)|(amp|lt|gt|quot|apos));/giu;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Raw text `[from, to)` of the document as mapped text, its entities decoded (each standing for itself). */
function decoded(source: string, from: number, to: number, markup: MarkupRange[] | null): MappedText {
  const raw = source.slice(from, to);
  const out = new MappedText();
  let at = 0;
  for (const m of raw.matchAll(ENTITY)) {
    out.copy(raw.slice(at, m.index), from + at);
    const char = m[3] ? NAMED[m[3].toLowerCase()] : String.fromCodePoint(parseInt(m[1] ?? m[2], m[1] ? 16 : 10));
    out.replace(char, from + m.index!, from + m.index! + m[0].length);
    markup?.push({ index: from + m.index!, length: m[0].length, pause: false, text: char });
    at = m.index! + m[0].length;
  }
  out.copy(raw.slice(at), from + at);
  return out;
}

function positioned(parser: SaxesParser, reason: string): ApiError {
  return new ApiError('invalid_ssml', { line: parser.line, column: parser.column, reason });
}

const DURATION = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)\s*$/iu;
const PERCENT = /^\s*([+-]?)(\d+(?:\.\d*)?|\.\d+)\s*%\s*$/u;
const NUMBER = /^\s*([+-]?)(\d+(?:\.\d*)?|\.\d+)\s*$/u;
const DECIBELS = /^\s*([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*dB\s*$/iu;

/** A signed share changes the value by that much ("+20%" → ×1.2); an unsigned one sets it ("80%" → ×0.8). */
function signedShare(sign: string, share: number): number {
  return sign === '+' ? 1 + share : sign === '-' ? 1 - share : share;
}

/** A `<prosody rate>` as a multiplier of the rate in force; null if it cannot be read. */
function rate(value: string): number | null {
  const keyword = RATES[value.trim().toLowerCase()];
  if (keyword !== undefined) return keyword;
  // "+20%" and "-20%" change the rate (Azure); "80%" sets it (Polly, Google).
  const percent = PERCENT.exec(value);
  if (percent) return signedShare(percent[1], Number(percent[2]) / 100);
  const number = NUMBER.exec(value);
  // A bare number is a multiplier (Azure's "1.5").
  if (number && !number[1]) return Number(number[2]);
  return null;
}

/** `<prosody pitch>` keywords, as multipliers of the voice's pitch (about ±2.5 and ±5 semitones). */
const PITCHES: Record<string, number> = { 'x-low': 0.75, low: 0.87, medium: 1, default: 1, high: 1.15, 'x-high': 1.33 };
const SEMITONES = /^\s*([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*st\s*$/iu;
const HERTZ = /^\s*([+-]?)(\d+(?:\.\d*)?|\.\d+)\s*Hz\s*$/iu;
/** Hertz are read against this nominal voice pitch: engines take a relative pitch, not a frequency. */
const NOMINAL_PITCH_HZ = 200;
const MIN_PITCH = 0.25;
const MAX_PITCH = 4;

/** A `<prosody pitch>` as a multiplier of the pitch in force; null if it cannot be read. */
function pitch(value: string): number | null {
  const keyword = PITCHES[value.trim().toLowerCase()];
  if (keyword !== undefined) return keyword;
  const semitones = SEMITONES.exec(value);
  if (semitones) return 2 ** (Number(semitones[1]) / 12);
  const hertz = HERTZ.exec(value);
  if (hertz) return signedShare(hertz[1], Number(hertz[2]) / NOMINAL_PITCH_HZ);
  const percent = PERCENT.exec(value);
  if (percent) return signedShare(percent[1], Number(percent[2]) / 100);
  return null;
}

/** A `<prosody volume>` as a gain multiplier; null if it cannot be read. */
function volume(value: string): number | null {
  const word = value.trim().toLowerCase();
  if (word === 'silent') return 0;
  if (VOLUMES_DB[word] !== undefined) return 10 ** (VOLUMES_DB[word] / 20);
  const db = DECIBELS.exec(value);
  if (db) return 10 ** (Number(db[1]) / 20);
  const percent = PERCENT.exec(value);
  if (percent) return signedShare(percent[1], Number(percent[2]) / 100);
  // Azure's 0–100 scale, where 100 is the voice's own level; "+10" and "-10" change it.
  const number = NUMBER.exec(value);
  if (number) {
    const n = Number(number[2]) / 100;
    return number[1] === '+' ? 1 + n : number[1] === '-' ? 1 - n : n;
  }
  return null;
}

/**
 * Reads an SSML document into segments. Throws `invalid_ssml` (with the line and column) for
 * anything it refuses: malformed XML, a root other than `<speak>`, a DOCTYPE, `<audio>`, nesting or
 * element counts over the bounds, and attribute values of `break` and `prosody` that cannot be read.
 */
export function readSsml(source: string): SsmlReading {
  const parser = new SaxesParser({ position: true });
  const segments: MappedTagSegment[] = [];
  const markup: MarkupRange[] = [];
  const stack: Frame[] = [];
  let counted = '';
  let breaks = 0;
  let elements = 0;
  let cursor = 0;
  let spokeAnything = false;
  /** A paragraph or sentence boundary waiting for the next text. */
  let pause = 0;
  let failure: ApiError | null = null;
  const fail = (error: ApiError): never => {
    failure ??= error;
    throw failure;
  };
  const top = (): Frame => stack.at(-1)!;
  const hide = (to: number, pauses: boolean): void => {
    if (to > cursor) markup.push({ index: cursor, length: to - cursor, pause: pauses });
    cursor = Math.max(cursor, to);
  };
  const speakRun = (run: MappedText, frame: Frame, inline: { sayAs?: SayAs; phonemes?: string } = {}): void => {
    const { sayAs, phonemes } = inline;
    if (!run.text.trim()) {
      // Whitespace between runs still separates the words of the engine's text.
      const last = segments.at(-1);
      if (last?.kind === 'text' && !last.sayAs && !last.phonemes) {
        last.text += run.text;
        last.source.append(run);
      }
      return;
    }
    if (pause > 0 && spokeAnything) segments.push({ kind: 'break', seconds: pause });
    pause = 0;
    spokeAnything = true;
    const last = segments.at(-1);
    const alike = last?.kind === 'text' && !last.sayAs && !last.phonemes && last.spell === frame.spell && last.speed === frame.speed && last.volume === frame.volume && (last.pitch ?? 1) === frame.pitch && (last.language ?? null) === frame.language;
    if (!sayAs && !phonemes && alike) {
      last.text += run.text;
      last.source.append(run);
    } else {
      segments.push({
        kind: 'text',
        text: run.text,
        spell: frame.spell,
        speed: frame.speed,
        volume: frame.volume,
        ...(frame.pitch !== 1 ? { pitch: frame.pitch } : {}),
        source: run,
        ...(sayAs ? { sayAs } : {}),
        ...(phonemes ? { phonemes } : {}),
        ...(frame.language ? { language: frame.language } : {}),
      });
    }
  };
  const boundary = (seconds: number): void => {
    pause = Math.max(pause, seconds);
    counted += ' ';
  };

  parser.on('error', (err) => fail(positioned(parser, err.message.replace(/^\d+:\d+:\s*/u, ''))));
  parser.on('doctype', () => fail(positioned(parser, 'a DOCTYPE is not accepted')));
  parser.on('xmldecl', () => hide(parser.position, false));
  parser.on('processinginstruction', () => hide(parser.position, false));
  parser.on('comment', () => hide(parser.position, false));
  parser.on('text', (text) => {
    // The text runs from the cursor to the '<' just read (or to the end of the document).
    const end = parser.position - (parser.closed ? 0 : 1);
    if (stack.length === 0) return void (cursor = Math.max(cursor, end));
    const run = decoded(source, cursor, Math.max(cursor, end), markup);
    cursor = Math.max(cursor, end);
    const frame = top();
    if (run.text !== text.replace(/\r\n?/gu, '\n') && run.text.replace(/\r\n?/gu, '\n') !== text) {
      // Positions and text disagree (should not happen): speak the parser's text unmapped.
      const plain = new MappedText().insert(text);
      return void addText(plain, frame, text);
    }
    addText(run, frame, run.text);
  });
  parser.on('cdata', (data) => {
    const end = parser.position;
    const from = end - 3 - data.length;
    hide(from, false);
    const run = MappedText.copied(data, from);
    cursor = from + data.length;
    hide(end, false);
    if (stack.length > 0) addText(run, top(), data);
  });
  const addText = (run: MappedText, frame: Frame, text: string): void => {
    if (frame.sub) {
      const first = text.search(/\S/u);
      if (first >= 0) {
        const range = run.toSource(first, text.trimEnd().length);
        if (range) {
          frame.sub.from = Math.min(frame.sub.from, range.from);
          frame.sub.to = Math.max(frame.sub.to, range.to);
        }
      }
      return;
    }
    counted += text;
    gather(run, frame);
  };
  /** Text of `frame`: part of the `<say-as>` or `<phoneme>` it is in, or spoken as it comes. */
  const gather = (run: MappedText, frame: Frame): void => {
    if (frame.sayAs) frame.sayAs.text.append(run);
    else if (frame.phoneme) frame.phoneme.text.append(run);
    else speakRun(run, frame);
  };

  parser.on('opentag', (tag: SaxesTag) => {
    const selfClosing = tag.isSelfClosing;
    const name = tag.name;
    const attributes = tag.attributes as Record<string, string>;
    hide(parser.position, SEPARATING.has(name));
    if (++elements > MAX_ELEMENTS) fail(positioned(parser, `more than ${MAX_ELEMENTS} elements`));
    if (stack.length >= MAX_DEPTH) fail(positioned(parser, `elements nested deeper than ${MAX_DEPTH}`));
    if (stack.length === 0 && name !== 'speak') fail(positioned(parser, `the root element must be <speak>, not <${name}>`));
    if (name === 'audio') fail(positioned(parser, '<audio> is not supported: no audio is fetched'));
    const parent = stack.at(-1) ?? { name: '', speed: 1, volume: 1, pitch: 1, spell: false, sayAs: null, sub: null, phoneme: null, language: null };
    const frame: Frame = { ...parent, name };
    switch (name) {
      case 'p':
      case 'paragraph':
        boundary(PARAGRAPH_PAUSE);
        frame.language = attributes['xml:lang'] === undefined ? parent.language : (languageTag(attributes['xml:lang']) ?? parent.language);
        break;
      case 's':
      case 'sentence':
        boundary(SENTENCE_PAUSE);
        frame.language = attributes['xml:lang'] === undefined ? parent.language : (languageTag(attributes['xml:lang']) ?? parent.language);
        break;
      case 'lang':
        // An unknown language is the engine's to fall back from; a tag not in shape changes nothing.
        if (attributes['xml:lang'] !== undefined) frame.language = languageTag(attributes['xml:lang']) ?? parent.language;
        break;
      case 'phoneme': {
        const ph = attributes.ph;
        if (ph === undefined || !ph.trim()) fail(positioned(parser, '<phoneme> needs a ph with the phonemes to speak'));
        let ipa = '';
        try {
          ipa = normalisePhonemes(ph!, attributes.alphabet ?? 'ipa');
        } catch (err) {
          if (!(err instanceof PhonemeError)) throw err;
          fail(positioned(parser, `<phoneme ph="${ph}">: ${err.message}`));
        }
        // Inside another reading (a say-as, a sub, spelling, another phoneme), the outer one decides what is said.
        if (!parent.sayAs && !parent.sub && !parent.spell && !parent.phoneme) frame.phoneme = { ipa, text: new MappedText() };
        break;
      }
      case 'break': {
        breaks++;
        counted += ' ';
        let seconds: number;
        if (attributes.time !== undefined) {
          const match = DURATION.exec(attributes.time);
          if (!match) fail(positioned(parser, `<break time="${attributes.time}"> must be seconds ("1s") or milliseconds ("500ms")`));
          seconds = Math.min(MAX_BREAK_SECONDS, Number(match![1]) / (match![2].toLowerCase() === 'ms' ? 1000 : 1));
        } else if (attributes.strength !== undefined) {
          const strength = BREAK_STRENGTH[attributes.strength.trim().toLowerCase()];
          if (strength === undefined) fail(positioned(parser, `<break strength="${attributes.strength}"> must be one of ${Object.keys(BREAK_STRENGTH).join(', ')}`));
          seconds = strength;
        } else seconds = BREAK_STRENGTH.medium;
        // An explicit break replaces the pause of a boundary next to it.
        pause = 0;
        if (seconds > 0 && !frame.sub) segments.push({ kind: 'break', seconds });
        break;
      }
      case 'prosody': {
        if (attributes.rate !== undefined) {
          const r = rate(attributes.rate);
          if (r === null || !(r > 0)) fail(positioned(parser, `<prosody rate="${attributes.rate}"> must be x-slow, slow, medium, fast, x-fast, a percentage or a multiplier`));
          frame.speed = parent.speed * r!;
        }
        if (attributes.volume !== undefined) {
          const v = volume(attributes.volume);
          if (v === null || !(v >= 0)) fail(positioned(parser, `<prosody volume="${attributes.volume}"> must be silent, x-soft, soft, medium, loud, x-loud, a change in dB ("+6dB") or a percentage`));
          frame.volume = Math.min(MAX_VOLUME, parent.volume * v!);
        }
        if (attributes.pitch !== undefined) {
          const p = pitch(attributes.pitch);
          if (p === null || !(p > 0)) fail(positioned(parser, `<prosody pitch="${attributes.pitch}"> must be x-low, low, medium, high, x-high, a change in semitones ("+2st"), Hz ("+20Hz") or a percentage`));
          frame.pitch = Math.min(MAX_PITCH, Math.max(MIN_PITCH, parent.pitch * p!));
        }
        break;
      }
      case 'emphasis': {
        const level = EMPHASIS[(attributes.level ?? 'moderate').trim().toLowerCase()] ?? EMPHASIS.moderate;
        frame.speed = parent.speed * level.speed;
        frame.volume = Math.min(MAX_VOLUME, parent.volume * level.volume);
        break;
      }
      case 'say-as': {
        const interpretAs = (attributes['interpret-as'] ?? '').trim().toLowerCase();
        if (SPELLED.has(interpretAs)) frame.spell = true;
        else if (interpretAs && !parent.sayAs && !parent.spell && !parent.phoneme) {
          const how: SayAs = { interpretAs };
          if (attributes.format) how.format = attributes.format;
          if (attributes.detail) how.detail = attributes.detail;
          frame.sayAs = { how, text: new MappedText() };
        }
        break;
      }
      case 'sub':
        if (attributes.alias !== undefined && !parent.sub) {
          frame.sub = { alias: attributes.alias, from: Infinity, to: -Infinity };
        }
        break;
      case 'mark':
        if (attributes.name !== undefined && !frame.sub) segments.push({ kind: 'mark', name: attributes.name });
        break;
      default:
        // speak, voice, w, token and any other element: their text is spoken as it is.
        break;
    }
    stack.push(frame);
    if (selfClosing) return;
  });

  parser.on('closetag', (tag) => {
    hide(parser.position, SEPARATING.has(tag.name));
    const frame = stack.pop()!;
    const parent = stack.at(-1);
    if (frame.name === 'p' || frame.name === 'paragraph') boundary(PARAGRAPH_PAUSE);
    else if (frame.name === 's' || frame.name === 'sentence') boundary(SENTENCE_PAUSE);
    if (frame.sub && (!parent || !parent.sub)) {
      const { alias, from, to } = frame.sub;
      counted += alias;
      if (alias.trim() && parent) {
        // The alias stands for the text it replaces (or, for an empty <sub>, for the element itself).
        const run = from <= to ? new MappedText().replace(alias, from, to) : new MappedText().insert(alias);
        gather(run, parent);
      }
    }
    if (frame.sayAs && (!parent || !parent.sayAs) && parent) {
      const run = frame.sayAs.text;
      if (run.text.trim()) speakRun(run, parent, { sayAs: frame.sayAs.how });
      else speakRun(run, parent);
    }
    if (frame.phoneme && parent && parent.phoneme !== frame.phoneme) {
      // An empty <phoneme> says nothing: what is spoken is what is counted, its text.
      const run = frame.phoneme.text;
      if (run.text.trim()) speakRun(run, parent, { phonemes: frame.phoneme.ipa });
    }
  });

  try {
    parser.write(source).close();
  } catch (err) {
    if (failure) throw failure;
    throw err instanceof ApiError ? err : positioned(parser, err instanceof Error ? err.message.replace(/^\d+:\d+:\s*/u, '') : 'the document cannot be read');
  }
  if (failure) throw failure;
  hide(source.length, true);
  const characters = countCharacters(counted.replace(/\s+/gu, ' ').trim()) + breaks;
  return { segments: segments.filter((s) => s.kind !== 'text' || s.text.trim() !== ''), characters, markup };
}
