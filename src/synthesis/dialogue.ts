/**
 * @module synthesis/dialogue
 * A dialogue is one request whose text is several turns, each spoken in its
 * own voice, one after another with a pause between them. It is not a second
 * pipeline: its transcript is the turns' texts joined by line breaks (so word
 * timestamps name the client's words, turn after turn), its segments are each
 * turn's segments (`segments.ts`) naming the turn's speaker, with a silence
 * between turns, and the pipeline hands each text segment its speaker's voice.
 * Limits and billing count the turns' characters, the joins not included.
 */
import { ApiError } from '../errors/api-error.js';
import type { VoiceReference } from '../engines/engine.js';
import type { Voice } from '../voices/voice.js';
import { segmentsOf, speechSegments, type SegmentContext, type SpeechSegment } from './segments.js';
import { isSsml, readSsml, type MarkupRange, type SsmlReading } from './ssml.js';
import { countTranscriptCharacters, tagRanges } from './tags.js';

/** One turn as a client sent it: its text (with inline tags, or SSML) and the id of the voice that speaks it. */
export interface DialogueTurn {
  transcript: string;
  voiceId: string;
  /** As `transcript_type` says; absent: SSML when the text starts with `<speak` (`ssml.ts`). */
  type?: 'text' | 'ssml';
  /** The language the turn is read in, when the client named one (else the request's, else its voice's). */
  language?: string;
}

/** A dialogue read once: each turn's SSML reading (null for text with inline tags), its characters and the markup of the joined transcript. */
export interface DialogueReading {
  readings: (SsmlReading | null)[];
  characters: number;
  /** Where the joined transcript's tags and SSML markup stand, for word timestamps (`word-align.ts`). */
  markup: MarkupRange[];
}

/** How dialogues are made: the pause between two turns and the most turns one request may have (`voices.dialogue`). */
export interface DialogueSettings {
  pauseSeconds: number;
  maxTurns: number;
}

export const DIALOGUE_DEFAULTS: DialogueSettings = { pauseSeconds: 0.3, maxTurns: 100 };

/** A voice of a dialogue as resolved: the voice, its clip for a cloning engine, its loudness gain, and where its turn's text starts in the transcript. */
export interface Speaker {
  voice: Voice;
  reference: VoiceReference | null;
  gain: number;
  /** Where the turn's text starts in the request's transcript (UTF-16 code units). */
  at: number;
  /** The language the turn is read in (`language.ts`); absent: the request's. */
  language?: string;
}

/** Turns are joined by a line break: a word never runs from one turn into the next. */
const JOIN = '\n';

/** The request's transcript for `turns`: their texts joined, in order. */
export function dialogueTranscript(turns: readonly DialogueTurn[]): string {
  return turns.map((turn) => turn.transcript).join(JOIN);
}

/** Where each turn's text starts in `dialogueTranscript(turns)`. */
export function turnOffsets(turns: readonly DialogueTurn[]): number[] {
  const offsets: number[] = [];
  let at = 0;
  for (const turn of turns) {
    offsets.push(at);
    at += turn.transcript.length + JOIN.length;
  }
  return offsets;
}

/**
 * Reads a dialogue's turns: each SSML turn read (`invalid_ssml` for one that cannot be), and the
 * characters for limits and billing, the sum of its turns', each counted as a transcript is
 * (`tags.ts`, `ssml.ts`). Refuses a dialogue with no turn, more than `maxTurns`, or a turn with
 * nothing to speak, before anything is looked up.
 */
export function readDialogue(turns: readonly DialogueTurn[], settings: DialogueSettings): DialogueReading {
  if (turns.length === 0) throw new ApiError('missing_transcript');
  if (turns.length > settings.maxTurns) throw new ApiError('too_many_dialogue_turns', { count: turns.length, max: settings.maxTurns });
  const offsets = turnOffsets(turns);
  const reading: DialogueReading = { readings: [], characters: 0, markup: [] };
  turns.forEach((turn, index) => {
    if (!turn.transcript.trim()) throw new ApiError('empty_dialogue_turn', { index });
    const ssml = isSsml(turn.transcript, turn.type) ? readSsml(turn.transcript) : null;
    reading.readings.push(ssml);
    reading.characters += ssml ? ssml.characters : countTranscriptCharacters(turn.transcript);
    for (const range of ssml ? ssml.markup : tagRanges(turn.transcript)) reading.markup.push({ ...range, index: range.index + offsets[index] });
  });
  return reading;
}

/**
 * The segments of a dialogue: each turn's, its text mapped into the joined transcript and naming
 * its speaker (an index into `speakers`), at that speaker's loudness gain; `pauseSeconds` of silence
 * between turns. A turn with nothing to speak once its tags are read is refused.
 */
export function dialogueSegments(turns: readonly DialogueTurn[], reading: DialogueReading, speakers: readonly Speaker[], context: Omit<SegmentContext, 'voiceGain'>, pauseSeconds: number): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  turns.forEach((turn, index) => {
    const speaker = speakers[index];
    const ssml = reading.readings[index];
    const turnContext = { ...context, voiceGain: speaker.gain, ...(speaker.language ? { language: speaker.language } : {}) };
    const own = ssml ? segmentsOf(ssml.segments, turnContext) : speechSegments(turn.transcript, turnContext);
    if (!own.some((segment) => segment.kind === 'text')) throw new ApiError('empty_dialogue_turn', { index });
    if (index > 0 && pauseSeconds > 0) segments.push({ kind: 'silence', seconds: pauseSeconds });
    for (const segment of own) {
      segments.push(segment.kind === 'text' ? { ...segment, source: segment.source.shifted(speaker.at), speaker: index } : segment);
    }
  });
  return segments;
}

/** The turn whose text holds `position` of the transcript, and its voice's id. */
export function speakerAt(speakers: readonly Speaker[], position: number): { voice: string; turn: number } {
  let low = 0;
  let high = speakers.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (speakers[mid].at <= position) low = mid;
    else high = mid - 1;
  }
  return { voice: speakers[low].voice.id, turn: low };
}
