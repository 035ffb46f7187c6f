/**
 * @module synthesis/request
 * The one typed request every transport produces and the pipeline consumes.
 * Dialects (Cartesia bytes/SSE/WebSocket, OpenAI) differ only in how they
 * build it and how they frame what comes out.
 */
import type { OutputFormat } from '../audio/format.js';
import type { Engine, Playback, VoiceReference } from '../engines/engine.js';
import type { GenerationSettings } from '../models/generation-config.js';
import type { ModelProfile } from '../models/profile.js';
import type { PronunciationItem } from '../store/store.js';
import type { Voice } from '../voices/voice.js';
import type { Speaker } from './dialogue.js';
import type { SpeechSegment } from './segments.js';
import type { MarkupRange } from './ssml.js';
import type { WordTrack } from './word-align.js';

export interface SynthesisRequest {
  requestId: string;
  model: ModelProfile;
  /** The model id the client named, when an alias stood for `model` (`SpeechInput.modelNamed`). */
  modelNamed?: string;
  engine: Engine;
  /** The transcript exactly as sent: what limits and billing count. */
  transcript: string;
  /** Characters of `transcript` for limits and billing: code points, a `<break>` tag counting one (`tags.ts`); of an SSML transcript, its spoken text (`ssml.ts`). */
  characters: number;
  /** The transcript is SSML: the markup its words leave out (`ssml.ts`); a dialogue's: every turn's tags and SSML markup (`dialogue.ts`); absent for text with inline tags. */
  markup?: MarkupRange[];
  /** What the pipeline runs: text for the engine (tags read, dictionary applied) and silences. */
  segments: SpeechSegment[];
  /** The voice's fixed loudness gain on this engine (`voice-gain.ts`), part of every text segment's gain. */
  voiceGain: number;
  /** The dictionary items to apply to any text this request speaks (WebSocket segments too); null without a dictionary. */
  pronunciation: PronunciationItem[] | null;
  /** Text is normalised before the engine speaks it (the engine's `normalize` setting): WebSocket segments too. */
  normalize?: boolean;
  voice: Voice;
  /** A dialogue's turns' voices, one per turn (`dialogue.ts`); a text segment names its own by index. Absent: `voice` speaks it all. */
  speakers?: Speaker[];
  /** The voice's clip and transcript when the engine clones and the voice is a cloned one; else null. */
  reference: VoiceReference | null;
  format: OutputFormat;
  /** The language the client named (`language.ts`), as a lower-case tag; null: none. */
  language: string | null;
  /** The language text is read in where SSML names none: the request's, its voice's or the model's (`language.ts`). */
  spokenLanguage?: string;
  settings: GenerationSettings;
  /** Whether audio is sent as it is made (affects allowed formats and WAV headers). */
  streaming: boolean;
  wordTimestamps: boolean;
  /** With `wordTimestamps`, the turn's words this request speaks part of (a WebSocket clause); absent: its own. */
  words?: WordTrack;
  /** Client-chosen context id, echoed in stream events. */
  contextId: string | null;
  /** Audio this request continues (a WebSocket context's next clause); see EngineInput.playback. */
  playback?: Playback;
  /** Engine work for this request runs at background priority (a long-form job's segment): see `EngineInput.background`. */
  background?: boolean;
}
