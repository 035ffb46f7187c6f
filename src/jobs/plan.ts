/**
 * @module jobs/plan
 * What a long-form job speaks, decided once at submit and kept with the job
 * (`JobRecord.spec`), so every server that runs or resumes it cuts the text
 * the same way: the request's fields as a neutral `SpeechInput` minus its
 * transcript, the resolved output format, and the segments in order.
 *
 * Text is cut with the splitter `say` uses (`synthesis/split.ts`): at
 * sentence ends and line breaks where it can, never inside a tag or a
 * `<spell>` run (the clause splitter's `cutAllowed`). A `<speed>` or
 * `<volume>` tag holds until the transcript ends, so a segment cut after one
 * starts with the tags in force there. An SSML input is one segment: its
 * elements nest, and a cut would part them.
 */
import type { OutputFormat } from '../audio/format.js';
import { ApiError } from '../errors/api-error.js';
import { isSsml, readSsml } from '../synthesis/ssml.js';
import type { SpeechInput } from '../synthesis/speech-input.js';
import { splitText } from '../synthesis/split.js';
import { countTranscriptCharacters, parseMappedTags, parseTags } from '../synthesis/tags.js';

/** One unit of work: synthesised, persisted and counted on its own. */
export interface PlannedSegment {
  text: string;
  ssml: boolean;
  /** Characters of this segment, counted as for billing. */
  characters: number;
  /** Silence before it, in seconds (the pause between two entries of `inputs`). */
  pauseBefore: number;
  /** The voice of its input, when the input names one of its own (a podcast's speakers); absent: the job's. */
  voiceId?: string;
}

/** The request a job's segments are made from: a `SpeechInput` without its transcript. */
export type JobInput = Omit<SpeechInput, 'transcript' | 'streaming' | 'contextId' | 'cache' | 'transcriptType'>;

export interface JobSpec {
  version: 1;
  input: JobInput;
  /** The output format resolved at submit (the result's). */
  format: OutputFormat;
  segments: PlannedSegment[];
  /** The submit's request id, recorded on the charge's ledger row. */
  requestId: string;
  /** The client's `x-request-id` at submit, if any. */
  clientRequestId: string | null;
  /** The submit's trace context (W3C headers), when it was traced: every run continues that trace. */
  trace?: Record<string, string>;
}

export interface JobText {
  transcript: string;
  /** The input's own voice; absent: the job's. */
  voiceId?: string;
  /** As `transcript_type` said (absent: SSML when it starts with `<speak`). */
  type?: 'text' | 'ssml';
}

/** Characters of one input, counted as for billing; reads it whole, so an unreadable tag or SSML is refused here (400). */
export function inputCharacters(text: JobText): number {
  if (isSsml(text.transcript, text.type)) return readSsml(text.transcript).characters;
  parseMappedTags(text.transcript);
  return countTranscriptCharacters(text.transcript);
}

/** The tags that carry `<speed>` and `<volume>` as they stand at the end of `before`. */
function stateTags(before: string): string {
  let speed = 1;
  let volume = 1;
  for (const segment of parseTags(before)) {
    if (segment.kind === 'text') {
      speed = segment.speed;
      volume = segment.volume;
    }
  }
  return `${speed !== 1 ? `<speed ratio="${speed}"/>` : ''}${volume !== 1 ? `<volume ratio="${volume}"/>` : ''}`;
}

/** The segments of the job's inputs, in order, with `pauseSeconds` of silence between inputs. */
export function planSegments(texts: readonly JobText[], maxCharacters: number, pauseSeconds: number): PlannedSegment[] {
  const segments: PlannedSegment[] = [];
  texts.forEach((text, index) => {
    const pause = index > 0 ? pauseSeconds : 0;
    const first = segments.length;
    const voice = text.voiceId ? { voiceId: text.voiceId } : {};
    if (isSsml(text.transcript, text.type)) {
      segments.push({ text: text.transcript, ssml: true, characters: readSsml(text.transcript).characters, pauseBefore: pause, ...voice });
    } else {
      let consumed = '';
      for (const piece of splitText(text.transcript, maxCharacters)) {
        // Tags in force where the piece starts travel with it; they are spoken as nothing.
        const carried = stateTags(consumed);
        consumed += piece + ' ';
        if (!parseTags(piece).some((part) => part.kind === 'text' && part.text.trim())) {
          // Only tags: a break still counts, as silence of its own.
          if (!/<break/iu.test(piece)) continue;
        }
        segments.push({ text: carried + piece, ssml: false, characters: countTranscriptCharacters(piece), pauseBefore: segments.length === first ? pause : 0, ...voice });
      }
    }
    if (segments.length === first) throw new ApiError('missing_transcript');
  });
  return segments;
}
