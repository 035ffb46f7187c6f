/**
 * @module synthesis/tags
 * Cartesia's inline tags in a transcript — `<break time="1s"/>`,
 * `<speed ratio="1.2"/>`, `<volume ratio="0.8"/>`, `<emotion value="…"/>`
 * and `<spell>…</spell>` — read into segments of text and silence, so tags
 * never reach an engine (eSpeak would read them as markup) and a
 * pronunciation dictionary never matches inside one. Only these five names
 * are tags; any other `<…>` is ordinary text. A tag with one of these names
 * whose attributes cannot be read is refused (400 `invalid_tag`) rather than
 * guessed at. Also here: how tags count toward limits and billing, and where
 * streamed text may be cut without splitting a tag or a spelled run.
 */
import { ApiError } from '../errors/api-error.js';
import { countCharacters } from './characters.js';
import type { SayAs } from './normalize/english.js';
import { MappedText } from './text-map.js';

export type TagSegment =
  | {
      kind: 'text';
      text: string;
      /** Inside `<spell>`: spoken letter by letter. */
      spell: boolean;
      /** The `<speed ratio>` in force (1 without one). */
      speed: number;
      /** The `<volume ratio>` in force (1 without one). */
      volume: number;
    }
  | { kind: 'break'; seconds: number };

/**
 * A tag segment whose text knows where in the transcript it came from (`text-map.ts`): what both
 * readers of markup produce, Cartesia's tags here and SSML (`ssml.ts`). SSML adds a `say-as`
 * reading, phonemes, a language and a pitch on a text run, and `mark`s, which name a point in the audio.
 */
export type MappedTagSegment =
  | Exclude<TagSegment, { kind: 'text' }>
  | (Extract<TagSegment, { kind: 'text' }> & {
      source: MappedText;
      sayAs?: SayAs;
      /** SSML `<prosody pitch>`: a multiplier of the voice's pitch (absent: 1). */
      pitch?: number;
      /** SSML `<phoneme>`: the run is spoken as these phonemes (normalised IPA, `engines/phonemes.ts`) by an engine that takes them. */
      phonemes?: string;
      /** SSML `<lang>`: the language the run is in, a lower-case BCP 47 tag. */
      language?: string;
    })
  | { kind: 'mark'; name: string };

/** Ranges the tags accept (Cartesia's). */
export const TAG_LIMITS = {
  speed: { min: 0.6, max: 1.5 },
  volume: { min: 0.5, max: 2.0 },
  /** Longest `<break>`, in seconds. */
  breakSeconds: 10,
} as const;

const NAMES = ['break', 'speed', 'volume', 'emotion', 'spell'] as const;
type TagName = (typeof NAMES)[number];

/** A tag: `<name …>`, `<name …/>` or `</name>` for one of the five names, any case, any spacing. */
const TAG = /<\s*(\/)?\s*(break|speed|volume|emotion|spell)(?![\w-])([^<>]*)>/giu;
const ATTRIBUTE = /([a-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>/]+))/giu;
const DURATION = /^(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)$/iu;
const RATIO = /^[+]?(\d+(?:\.\d*)?|\.\d+)$/u;

interface TagToken {
  index: number;
  length: number;
  source: string;
  name: TagName;
  closing: boolean;
  attributes: string;
}

function tags(text: string): TagToken[] {
  return [...text.matchAll(TAG)].map((m) => ({
    index: m.index!,
    length: m[0].length,
    source: m[0],
    name: m[2].toLowerCase() as TagName,
    closing: m[1] === '/',
    attributes: m[3],
  }));
}

function invalid(tag: TagToken, reason: string): ApiError {
  const shown = tag.source.length > 80 ? `${tag.source.slice(0, 77)}…` : tag.source;
  return new ApiError('invalid_tag', { tag: shown, reason });
}

/** `name="value"` pairs; anything else in the tag (bar a closing `/`) makes it unreadable. */
function attributesOf(tag: TagToken): Map<string, string> {
  const found = new Map<string, string>();
  const rest = tag.attributes.replace(ATTRIBUTE, (_, name: string, dq?: string, sq?: string, bare?: string) => {
    found.set(name.toLowerCase(), (dq ?? sq ?? bare ?? '').trim());
    return ' ';
  });
  if (!/^\s*\/?\s*$/u.test(rest)) throw invalid(tag, 'write attributes as name="value"');
  return found;
}

function ratio(tag: TagToken, attributes: Map<string, string>, range: { min: number; max: number }): number {
  const raw = attributes.get('ratio');
  if (raw === undefined) throw invalid(tag, `it needs ratio="…", a number from ${range.min} to ${range.max}`);
  const value = RATIO.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max)) throw invalid(tag, `ratio must be a number from ${range.min} to ${range.max}; got "${raw}"`);
  return value;
}

function breakSeconds(tag: TagToken, attributes: Map<string, string>): number {
  const raw = attributes.get('time');
  const match = raw === undefined ? null : DURATION.exec(raw);
  const seconds = match ? Number(match[1]) / (match[2].toLowerCase() === 'ms' ? 1000 : 1) : NaN;
  if (!(seconds >= 0 && seconds <= TAG_LIMITS.breakSeconds)) {
    throw invalid(tag, `time must be seconds ("1s", "0.5s") or milliseconds ("500ms"), at most ${TAG_LIMITS.breakSeconds} s${raw === undefined ? '' : `; got "${raw}"`}`);
  }
  return seconds;
}

/**
 * Reads `text` into segments: text runs carry the spell/speed/volume in force where they stand,
 * breaks carry their length. `<speed>` and `<volume>` hold until the next tag of the same name (or
 * its closing tag, which restores the value before it). An unclosed `<spell>` spells to the end;
 * a stray `</spell>` and closing tags of `break` and `emotion` do nothing. `<emotion>` is read and
 * dropped: no engine here can act on it. Adjacent runs that differ only in a dropped tag are joined;
 * runs of only whitespace are dropped. Throws `invalid_tag` for a tag whose attributes cannot be read.
 */
export function parseTags(text: string): TagSegment[] {
  return parseMappedTags(text).flatMap((segment): TagSegment[] =>
    segment.kind === 'text' ? [{ kind: 'text', text: segment.text, spell: segment.spell, speed: segment.speed, volume: segment.volume }] : segment.kind === 'mark' ? [] : [segment],
  );
}

/** `parseTags`, each text run with where it stands in `text`. */
export function parseMappedTags(text: string): MappedTagSegment[] {
  const segments: MappedTagSegment[] = [];
  let spell = false;
  const speeds = [1];
  const volumes = [1];
  const pushText = (from: number, to: number): void => {
    if (from >= to) return;
    const run = text.slice(from, to);
    const speed = speeds.at(-1)!;
    const volume = volumes.at(-1)!;
    const last = segments.at(-1);
    if (last?.kind === 'text' && last.spell === spell && last.speed === speed && last.volume === volume) {
      last.text += run;
      last.source.copy(run, from);
    } else segments.push({ kind: 'text', text: run, spell, speed, volume, source: MappedText.copied(run, from) });
  };
  let at = 0;
  for (const tag of tags(text)) {
    pushText(at, tag.index);
    at = tag.index + tag.length;
    if (tag.closing) {
      if (tag.name === 'spell') spell = false;
      else if (tag.name === 'speed' && speeds.length > 1) speeds.pop();
      else if (tag.name === 'volume' && volumes.length > 1) volumes.pop();
      continue;
    }
    const attributes = attributesOf(tag);
    switch (tag.name) {
      case 'break':
        segments.push({ kind: 'break', seconds: breakSeconds(tag, attributes) });
        break;
      case 'speed':
        speeds.push(ratio(tag, attributes, TAG_LIMITS.speed));
        break;
      case 'volume':
        volumes.push(ratio(tag, attributes, TAG_LIMITS.volume));
        break;
      case 'spell':
        // `<spell/>` spells nothing.
        if (!/\/\s*$/u.test(tag.attributes)) spell = true;
        break;
      case 'emotion':
        break;
    }
  }
  pushText(at, text.length);
  return segments.filter((segment) => segment.kind !== 'text' || segment.text.trim() !== '');
}

/**
 * What `<spell>` speaks: each letter and digit on its own (letters upper-cased, which engines read
 * as letter names), with a pause where the original had a space or punctuation.
 */
export function spellOut(text: string): string {
  return spellOutMapped(MappedText.copied(text, 0)).text;
}

/** `spellOut`, each spelled group standing for the group it spells (word timestamps name the original). */
export function spellOutMapped(run: MappedText): MappedText {
  const out = new MappedText();
  for (const group of run.text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const source = run.toSource(group.index!, group.index! + group[0].length)!;
    if (out.text) out.insert(', ');
    out.replace([...group[0]].map((char) => char.toUpperCase()).join(' '), source.from, source.to);
  }
  return out;
}

/**
 * Characters for limits and billing: Unicode code points of the transcript as sent, except that each
 * `<break …>` tag counts as one (as Cartesia bills it). Other tags count as the characters they are.
 */
export function countTranscriptCharacters(text: string): number {
  let count = countCharacters(text);
  if (!text.includes('<')) return count;
  for (const tag of tags(text)) {
    if (tag.name === 'break' && !tag.closing) count -= countCharacters(tag.source) - 1;
  }
  return count;
}

/** Where the tags of `text` stand, `[index, index + length)` in order, and which are `<break>`s (a pause: words end there). */
export function tagRanges(text: string): { index: number; length: number; pause: boolean }[] {
  return text.includes('<') ? tags(text).map(({ index, length, name, closing }) => ({ index, length, pause: name === 'break' && !closing })) : [];
}

/** The spell runs of `text`: closed ones as `[start, end)` from `<spell>` to the end of `</spell>`, and where an unclosed one starts. */
function spellRuns(list: TagToken[]): { closed: { start: number; end: number }[]; open: number | null } {
  const closed: { start: number; end: number }[] = [];
  let open: number | null = null;
  for (const tag of list) {
    if (tag.name !== 'spell') continue;
    if (!tag.closing && !/\/\s*$/u.test(tag.attributes)) open ??= tag.index;
    else if (tag.closing && open !== null) {
      closed.push({ start: open, end: tag.index + tag.length });
      open = null;
    }
  }
  return { closed, open };
}

/**
 * Whether streamed text may be cut at `position` (the text before it spoken now, the rest later)
 * without splitting a tag or a spelled run: not inside a tag, not between a `<spell>` and its
 * `</spell>`, and not anywhere after a `<spell>` that is not closed yet.
 */
export function cutAllowed(text: string, position: number): boolean {
  if (!text.includes('<')) return true;
  const list = tags(text);
  if (list.some((tag) => position > tag.index && position < tag.index + tag.length)) return false;
  const { closed, open } = spellRuns(list);
  if (closed.some((run) => position > run.start && position < run.end)) return false;
  return open === null || position <= open;
}

/** A trailing `<name…` with no `>` yet that could still become one of the five tags. */
const PARTIAL = /<\/?([a-z]*)([^<>]*)$/iu;

function mayBecomeTag(name: string, rest: string): boolean {
  const lower = name.toLowerCase();
  if (/^\s*$/u.test(rest)) return NAMES.some((n) => n.startsWith(lower));
  return (NAMES as readonly string[]).includes(lower) && /^[\s/]/u.test(rest);
}

/**
 * How much of the front of buffered text can be spoken before more arrives: all of it, except a
 * trailing `<…` that may still become a tag and a `<spell>` run that is not closed yet.
 */
export function speakablePrefix(text: string): number {
  if (!text.includes('<')) return text.length;
  let end = text.length;
  const partial = PARTIAL.exec(text);
  if (partial && mayBecomeTag(partial[1], partial[2])) end = partial.index;
  const { open } = spellRuns(tags(text.slice(0, end)));
  return open === null ? end : open;
}
