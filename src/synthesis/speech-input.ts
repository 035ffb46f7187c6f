/**
 * @module synthesis/speech-input
 * What a client asked for, in no dialect's shape: each transport's parser
 * produces one from its wire format (Cartesia body or message, OpenAI body),
 * and `resolve.ts` turns it into a `SynthesisRequest` against the model
 * profile, the caller's voices and dictionaries. Values here are checked for
 * shape only; everything a model decides is checked when resolving.
 */
import type { FormatRequest } from '../models/output-format.js';
import type { DialogueTurn } from './dialogue.js';

export interface SpeechInput {
  modelId: string;
  /** The model id the client named, when a dialect's alias turned it into `modelId` (OpenAI's `tts-1`); a key's model list may name either. */
  modelNamed?: string;
  /** The transcript exactly as sent. */
  transcript: string;
  voiceId: string;
  /** The format asked for, read from the dialect's wire form (null: none named); the model decides what it offers. */
  outputFormat: FormatRequest | null;
  /** `{speed?, volume?}`, checked against the model's ranges when resolved. */
  generationConfig: unknown;
  language: string | null;
  /** Audio is sent as it is made (progressive body, SSE, WebSocket). */
  streaming: boolean;
  wordTimestamps: boolean;
  contextId: string | null;
  pronunciationDictId: string | null;
  /** Several dictionaries, applied in this order (ElevenLabs' locators); when present, instead of `pronunciationDictId`. */
  pronunciationDictIds?: string[];
  /** Whether the text normaliser runs (ElevenLabs' `apply_text_normalization`); absent: the engine's setting. */
  normalize?: boolean;
  /** false: the client asked not to be served from, or kept in, the audio cache (`Cache-Control: no-store`, `"cache": false`). */
  cache?: boolean;
  /** `"ssml"` or `"text"` as the client said (`transcript_type`); absent: SSML when the transcript starts with `<speak` (`ssml.ts`). */
  transcriptType?: 'text' | 'ssml';
  /**
   * A dialogue: turns spoken one after another, each in its own voice (`dialogue.ts`). `transcript`
   * is then `dialogueTranscript(turns)` and `voiceId` the first turn's; each turn is text with inline tags or SSML.
   */
  turns?: DialogueTurn[];
}
