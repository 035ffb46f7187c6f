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
import { parseMappedTags, spellOutMapped } from './tags.js';
import type { MappedText } from './text-map.js';

export type SpeechSegment =
  | {
      kind: 'text';
      /** What the engine is given: no tags, dictionary applied, spelled runs spelled out. */
      text: string;
      /** The engine's speaking-rate multiplier. */
      speed: number;
      /** Linear gain applied to the engine's samples (voice loudness × volume × `<volume>`). */
      gain: number;
      /** `text` with where each part stands in the transcript: word timestamps name the transcript's words. */
      source: MappedText;
    }
  | { kind: 'silence'; seconds: number };

export interface SegmentContext {
  model: ModelProfile;
  settings: GenerationSettings;
  streaming: boolean;
  pronunciation: readonly PronunciationItem[] | null;
  /** The voice's loudness gain on this engine (`voice-gain.ts`). */
  voiceGain: number;
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
  const { model, settings, streaming, pronunciation, voiceGain } = context;
  const segments: SpeechSegment[] = [];
  let spoken = 0;
  for (const part of parseMappedTags(transcript)) {
    if (part.kind === 'break') {
      if (part.seconds > 0) segments.push({ kind: 'silence', seconds: part.seconds });
      continue;
    }
    // Expanded per run; the cap is on the whole, as for a transcript without tags.
    const source = part.spell ? spellOutMapped(part.source) : expandMappedForSpeech(part.source, pronunciation);
    const text = source.text;
    if (!text.trim()) continue;
    spoken += countCharacters(text);
    if (spoken > MAX_EXPANDED_CHARACTERS) throw new ApiError('transcript_too_long', { count: spoken, max: MAX_EXPANDED_CHARACTERS });
    const speed = !streaming && model.speed ? clamp(settings.speed * part.speed, model.speed) : settings.speed;
    const volume = model.volume ? part.volume : 1;
    segments.push({ kind: 'text', text, speed, gain: voiceGain * settings.volume * volume, source });
  }
  return segments;
}
