/**
 * @module engines/engine
 * The interface every engine implements — the embedded eSpeak NG pool, the
 * tone engine, and later local neural and remote engines. Given text, a voice
 * and settings it yields Float32 chunks at the engine's native rate (mono,
 * −1…1), optionally with word timings, and stops when the signal aborts.
 */
import type { VoiceReference } from '../voices/reference.js';
import type { Voice } from '../voices/voice.js';

export type { VoiceReference };

export interface WordTiming {
  word: string;
  /** Seconds from the start of this synthesis. */
  start: number;
  end: number;
  /**
   * Where an engine's word stands in `EngineInput.text`, `[from, to)` in UTF-16 code units, when the
   * engine knows. The pipeline maps it back to the client's own words (synthesis/word-align); a
   * word without it is looked for in the text by what it says.
   */
  from?: number;
  to?: number;
  /** The id of the voice that speaks the word: set on a dialogue's words (synthesis/dialogue). */
  voice?: string;
  /** The dialogue's turn the word is in (its index in the request's inputs). */
  turn?: number;
  /**
   * What the engine was given for the client's word, where that differs from the word: its
   * normalised form ("einundzwanzig" for "21"), a dictionary alias, a spelled run; empty when the
   * word was read as part of the word before it ("€" in "3,50 €"). Set by the word aligner.
   */
  spoken?: string;
}

export interface EngineChunk {
  samples: Float32Array;
  /** Words whose timing became known with this chunk. */
  words?: WordTiming[];
}

/**
 * A stretch of `EngineInput.text` to speak as phonemes rather than read: `[from, to)` in UTF-16 code
 * units, and the phonemes in normalised IPA (`engines/phonemes.ts`).
 */
export interface PhonemeSpan {
  from: number;
  to: number;
  ipa: string;
}

export interface EngineInput {
  /** Plain text to speak (markup characters are literal). */
  text: string;
  /** SSML `<phoneme>`: stretches of `text` to speak as these phonemes, in text order; set only for an engine that `takes.phonemes`. */
  phonemes?: PhonemeSpan[];
  /**
   * SSML `<lang>`: the language `text` is in (a lower-case BCP 47 tag), set only for an engine that
   * `takes.languages`. Unlike `language` (the request's), it names this text's language alone.
   */
  textLanguage?: string;
  voice: Voice;
  /** Speaking-rate multiplier, 1 = the voice's own rate. */
  speed: number;
  /** Pitch multiplier (SSML `<prosody pitch>`), 1 or absent = the voice's own; engines that cannot change pitch ignore it. */
  pitch?: number;
  language?: string;
  wordTimings: boolean;
  /** Set for an engine that clones (`Engine.cloning`) when the voice is a cloned one. */
  reference?: VoiceReference;
  /**
   * Set when this text continues audio its listener is already hearing (a WebSocket context's
   * next clause, a request's segment after a break): the listener has been hearing since
   * `startedAt` (`performance.now()` ms) and has been sent `seconds` of audio before this text.
   * An engine that queues may serve new requests' first audio before it, until the listener is
   * about to run out.
   */
  playback?: Playback;
  /**
   * Work no listener waits for (a long-form job's segment): an engine with a worker pool serves it
   * only when no other work waits, and never on the pool's last idle worker while it has more.
   */
  background?: boolean;
}

export interface Playback {
  startedAt: number;
  seconds: number;
}

/** How an engine that clones uses a cloned voice's clip. */
export interface CloningSupport {
  /** The clip's transcript is needed: a voice without one is refused (409 `voice_transcript_missing`). */
  requiresTranscript: boolean;
}

export interface EngineInfo {
  id: string;
  type: string;
  sampleRate: number;
  ready: boolean;
  [detail: string]: unknown;
}

export interface Engine {
  readonly id: string;
  readonly type: string;
  /** Native output rate in Hz. */
  readonly sampleRate: number;
  /**
   * Loudness (synthesis/voice-gain): `keep` leaves the engine's level as it is (remote servers
   * already serve one loudness per voice; a test signal has no voice); otherwise each voice's level
   * comes from `levels` (dBFS RMS measured once, by voice id) or is measured on first use.
   */
  readonly loudness?: { keep: true } | { levels: Readonly<Record<string, number>> };
  /** Loads and warms the engine; resolves once it can serve. */
  start(): Promise<void>;
  /** Stops accepting work and releases resources. */
  stop(): Promise<void>;
  isReady(): boolean;
  /**
   * What SSML asks of pronunciation that this engine does: `phonemes` (it speaks
   * `EngineInput.phonemes`), `languages` (it speaks `EngineInput.textLanguage`'s text in that
   * language). Absent or false: the pipeline leaves the field out and the engine speaks the text.
   */
  readonly takes?: { phonemes?: boolean; languages?: boolean };
  /** Whether this engine has a profile for the voice (a cloning engine: whether the voice has a clip). */
  supportsVoice(voice: Voice): boolean;
  /**
   * Present on an engine that mixes voices (voices/mix): the profiles a mix of `parts` (voices it
   * supports, with shares summing to 1, largest first) is spoken with, or null when it cannot mix
   * these. Absent: a mix on this engine is 400 `voice_mix_unsupported`.
   */
  mixProfiles?(parts: readonly { voice: Voice; weight: number }[]): Voice['profiles'] | null;
  /**
   * Present on an engine that speaks cloned voices from their clip (known once started): each
   * request for a cloned voice it supports then carries the voice's reference (`EngineInput.reference`).
   */
  readonly cloning?: CloningSupport;
  /**
   * Streams the synthesis. Throws `ApiError('engine_error' | 'engine_unavailable')`
   * on engine failure, and the signal's reason when aborted. Breaking out of the
   * iteration cancels the work.
   */
  synthesize(input: EngineInput, signal: AbortSignal): AsyncIterable<EngineChunk>;
  info(): EngineInfo;
  /**
   * What besides its configuration decides this engine's audio, known once started: an embedded
   * engine's package version, a local model's file digests. The audio cache's key takes it (with
   * the engine's type and configuration, `EngineRegistry.fingerprint`), so a new model file or
   * package never answers with the old one's audio.
   */
  fingerprint?(): string;
  /**
   * Voices this engine brings to the catalogue as built-ins (e.g. every voice eSpeak NG ships),
   * read once after `start()`. Engines without voices of their own leave it out.
   */
  builtinVoices?(): Voice[];
  /**
   * How often the engine has loaded its model (at start, and again after each idle unload) and how
   * long the last load took: a request during which the count rose waited for that load (the
   * `X-Voicegate-Engine-Load-Ms` header). Engines without idle unload leave it out.
   */
  loads?(): { count: number; lastMs: number | null };
}
