/**
 * @module synthesis/segments
 * Turns a transcript (or one spoken WebSocket clause) into what the
 * pipeline runs: text segments, each with the exact text an engine speaks,
 * its engine speed and its gain, and silences. Tags are read first
 * (`tags.ts`), so a pronunciation dictionary applies only to ordinary text —
 * never inside a tag or a `<spell>` run — and no tag reaches an engine.
 *
 * How tags degrade: `<speed>` follows the model's speed contract, so it
 * changes whole clips only (a stream keeps speed 1, as
 * `generation_config.speed` must) and is clamped to the model's range;
 * `<volume>` is a gain applied here, on top of the voice's loudness gain and
 * `generation_config.volume`, wherever the model takes a volume; `<break>`
 * is silence the pipeline inserts, whatever the engine; `<spell>` is spoken
 * as separate letters and digits; `<emotion>` has no effect.
 *
 * SSML's `<phoneme>` and `<lang>` (`ssml.ts`) ride on text segments: a
 * phoneme run joins the text around it as a `PhonemeSpan` over the words it
 * stands for, and a language starts a segment of its own. The pipeline hands
 * them on to engines that take them (`Engine.takes`); others speak the text.
 */
import { ApiError } from '../errors/api-error.js';
import type { PhonemeSpan } from '../engines/engine.js';
import type { GenerationSettings } from '../models/generation-config.js';
import type { ModelProfile } from '../models/profile.js';
import type { PronunciationItem } from '../store/store.js';
import { expandMappedForSpeech, MAX_EXPANDED_CHARACTERS } from './pronunciation.js';
import { countCharacters } from './characters.js';
import { normalizeIn, sayAsIn } from './normalize/languages.js';
import { readSsml } from './ssml.js';
import { parseMappedTags, spellOutMapped, type MappedTagSegment } from './tags.js';
import { MappedText } from './text-map.js';

export type SpeechSegment =
  | {
      kind: 'text';
      /** What the engine is given: no tags, dictionary applied, spelled runs spelled out. */
      text: string;
      /** The engine's speaking-rate multiplier. */
      speed: number;
      /** Linear gain applied to the engine's samples (voice loudness × volume × `<volume>`). */
      gain: number;
      /** SSML `<prosody pitch>`: a multiplier of the voice's pitch, for engines that can change it (absent: 1). */
      pitch?: number;
      /** SSML `<phoneme>`: stretches of `text` an engine that takes phonemes speaks as these phonemes instead. */
      phonemes?: PhonemeSpan[];
      /** The language `text` is in (a lower-case BCP 47 tag): SSML `<lang>`'s, else the request's (`language.ts`); absent: the voice's. */
      language?: string;
      /** `text` with where each part stands in the transcript: word timestamps name the transcript's words. */
      source: MappedText;
      /** A dialogue's turn: the index of its speaker in `SynthesisRequest.speakers` (absent: the request's voice). */
      speaker?: number;
    }
  | { kind: 'silence'; seconds: number }
  /** An SSML `<mark>`: its name is reported where it falls in the audio. */
  | { kind: 'mark'; name: string };

export interface SegmentContext {
  model: ModelProfile;
  settings: GenerationSettings;
  streaming: boolean;
  pronunciation: readonly PronunciationItem[] | null;
  /** The voice's loudness gain on this engine (`voice-gain.ts`). */
  voiceGain: number;
  /** The transcript is SSML (`ssml.ts`) rather than text with Cartesia's tags. */
  ssml?: boolean;
  /** Numbers, dates, money and the like are rewritten as words (`normalize/languages.ts`): the engine's `normalize` setting. */
  normalize?: boolean;
  /** The language of text no SSML `<lang>` names (`language.ts`: the request's, its voice's or the model's); absent: English. */
  language?: string;
}

function clamp(value: number, range: { min: number; max: number }): number {
  return Math.min(range.max, Math.max(range.min, value));
}

/**
 * The segments for `transcript`; empty when there is nothing to speak (only whitespace or tags
 * without effect). Throws `invalid_tag` for an unreadable tag and `transcript_too_long` when the
 * dictionary makes the spoken text longer than its cap.
 */
export function speechSegments(transcript: string, context: SegmentContext): SpeechSegment[] {
  return segmentsOf(context.ssml ? readSsml(transcript).segments : parseMappedTags(transcript), context);
}

/** What a text run speaks: spelled, read as its `say-as` asks, or with the dictionary and then the normaliser applied. */
function spokenText(part: Extract<MappedTagSegment, { kind: 'text' }>, context: SegmentContext): MappedText {
  if (part.spell) return spellOutMapped(part.source);
  const language = part.language ?? context.language ?? 'en';
  if (part.sayAs) {
    const said = sayAsIn(language, part.text, part.sayAs);
    const first = part.text.search(/\S/u);
    const range = first < 0 ? null : part.source.toSource(first, part.text.trimEnd().length);
    // A reading that does not fit the text leaves it to be read as plain text.
    if (said !== null && range) return new MappedText().replace(said, range.from, range.to);
  }
  const expanded = expandMappedForSpeech(part.source, context.pronunciation);
  // Each language is read by its own rules; one without rules keeps its digits for the engine.
  return context.normalize ? normalizeIn(language, expanded) : expanded;
}

/** Where the words of `text` (placed at `at` in a segment's text) stand, without the spaces around them. */
function spanOf(text: string, at: number, ipa: string): PhonemeSpan {
  const first = text.search(/\S/u);
  return { from: at + first, to: at + text.trimEnd().length, ipa };
}

/** The segments for what a reader of markup made (Cartesia's tags or SSML): the same for both. */
export function segmentsOf(parts: readonly MappedTagSegment[], context: SegmentContext): SpeechSegment[] {
  const { model, settings, streaming, voiceGain } = context;
  const segments: SpeechSegment[] = [];
  let spoken = 0;
  /** The last text run was read as a whole (`say-as`, `<phoneme>`): the next one joins it where they sound alike. */
  let lastInline = false;
  for (const part of parts) {
    if (part.kind === 'break') {
      if (part.seconds > 0) segments.push({ kind: 'silence', seconds: part.seconds });
      lastInline = false;
      continue;
    }
    if (part.kind === 'mark') {
      segments.push({ kind: 'mark', name: part.name });
      continue;
    }
    // Expanded per run; the cap is on the whole, as for a transcript without tags.
    const source = spokenText(part, context);
    const text = source.text;
    if (!text.trim()) continue;
    spoken += countCharacters(text);
    if (spoken > MAX_EXPANDED_CHARACTERS) throw new ApiError('transcript_too_long', { count: spoken, max: MAX_EXPANDED_CHARACTERS });
    const speed = !streaming && model.speed ? clamp(settings.speed * part.speed, model.speed) : settings.speed;
    const volume = model.volume ? part.volume : 1;
    const gain = voiceGain * settings.volume * volume;
    const last = segments.at(-1);
    // A `say-as` or `<phoneme>` run joins the text around it when they sound alike: the engine speaks
    // the sentence as one, not in pieces.
    const inline = part.sayAs !== undefined || part.phonemes !== undefined;
    const joins = inline || lastInline;
    lastInline = inline;
    const pitch = part.pitch !== undefined && part.pitch !== 1 ? part.pitch : undefined;
    const language = part.language ?? context.language;
    if (joins && last?.kind === 'text' && last.speed === speed && last.gain === gain && last.pitch === pitch && last.language === language) {
      const joined = new MappedText().append(last.source);
      // Runs read as a whole are words of their own: two words that would touch get a space between them.
      if (/[\p{L}\p{N}]$/u.test(joined.text) && /^[\p{L}\p{N}]/u.test(text)) joined.insert(' ');
      const at = joined.text.length;
      last.source = joined.append(source);
      last.text = last.source.text;
      if (part.phonemes) (last.phonemes ??= []).push(spanOf(text, at, part.phonemes));
    } else {
      segments.push({
        kind: 'text',
        text,
        speed,
        gain,
        ...(pitch !== undefined ? { pitch } : {}),
        ...(part.phonemes ? { phonemes: [spanOf(text, 0, part.phonemes)] } : {}),
        ...(language ? { language } : {}),
        source,
      });
    }
  }
  return segments;
}
