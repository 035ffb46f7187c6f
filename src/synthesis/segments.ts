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
 */
import { ApiError } from '../errors/api-error.js';
import type { GenerationSettings } from '../models/generation-config.js';
import type { ModelProfile } from '../models/profile.js';
import type { PronunciationItem } from '../store/store.js';
import { expandMappedForSpeech, MAX_EXPANDED_CHARACTERS } from './pronunciation.js';
import { countCharacters } from './characters.js';
import { normalizeMapped, sayAs } from './normalize/english.js';
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
      /** `text` with where each part stands in the transcript: word timestamps name the transcript's words. */
      source: MappedText;
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
  /** Numbers, dates, money and the like are rewritten as words (`normalize/english.ts`): the engine's `normalize` setting. */
  normalize?: boolean;
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
  if (part.sayAs) {
    const said = sayAs(part.text, part.sayAs);
    const first = part.text.search(/\S/u);
    const range = first < 0 ? null : part.source.toSource(first, part.text.trimEnd().length);
    // A reading that does not fit the text leaves it to be read as plain text.
    if (said !== null && range) return new MappedText().replace(said, range.from, range.to);
  }
  const expanded = expandMappedForSpeech(part.source, context.pronunciation);
  return context.normalize ? normalizeMapped(expanded) : expanded;
}

/** The segments for what a reader of markup made (Cartesia's tags or SSML): the same for both. */
export function segmentsOf(parts: readonly MappedTagSegment[], context: SegmentContext): SpeechSegment[] {
  const { model, settings, streaming, voiceGain } = context;
  const segments: SpeechSegment[] = [];
  let spoken = 0;
  let lastReadAs = false;
  for (const part of parts) {
    if (part.kind === 'break') {
      if (part.seconds > 0) segments.push({ kind: 'silence', seconds: part.seconds });
      lastReadAs = false;
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
    // A `say-as` run joins the text around it when they sound alike: the engine speaks the sentence
    // as one, not in pieces.
    const joins = part.sayAs !== undefined || lastReadAs;
    lastReadAs = part.sayAs !== undefined;
    const pitch = part.pitch !== undefined && part.pitch !== 1 ? part.pitch : undefined;
    if (joins && last?.kind === 'text' && last.speed === speed && last.gain === gain && last.pitch === pitch) {
      last.source = new MappedText().append(last.source).append(source);
      last.text = last.source.text;
    } else segments.push({ kind: 'text', text, speed, gain, ...(pitch !== undefined ? { pitch } : {}), source });
  }
  return segments;
}
