/**
 * @module models/profile
 * A model id is an API contract. Its profile fixes what a request may ask
 * for (length, formats, generation settings, price) independently of the
 * engine that happens to serve it, which is bound by `engine`.
 */
import type { Container, Encoding } from '../audio/format.js';

/** Output formats allowed for one kind of response (whole clip or stream). */
export interface FormatRules {
  containers: Container[];
  encodings: Encoding[];
  sampleRates: number[];
  /** Encoding used when `output_format.encoding` is absent; absent = encoding is required. */
  defaultEncoding?: Encoding;
  /** Allowed mp3 bit rates (only meaningful when `mp3` is among the containers). */
  mp3BitRates: number[];
  defaultMp3BitRate?: number;
  /**
   * Allowed Ogg Opus bit rates (only meaningful when `opus` is among the containers; absent = none,
   * so `opus` needs this list). Opus itself takes 6000–256000 at 8, 12, 16, 24 and 48 kHz.
   */
  opusBitRates?: number[];
  /** Opus bit rate used when `output_format.bit_rate` is absent; absent = bit_rate is required. */
  defaultOpusBitRate?: number;
}

export interface Range {
  min: number;
  max: number;
}

export interface ModelProfile {
  id: string;
  name: string;
  description: string;
  /** Engine id (a key of `engines` in config) that serves this model. */
  engine: string;
  /** Transcript length limit in Unicode code points, per request and per WebSocket message. */
  maxTranscriptChars: number;
  /** Formats for `/tts/bytes` without streaming. */
  clip: FormatRules;
  /** Formats for every streamed response (SSE, WebSocket, `stream: true`). */
  stream: FormatRules;
  /** Credits charged per character of transcript. */
  creditMultiplier: number;
  /** Allowed `generation_config.speed` range, or null when speed cannot be set. */
  speed: Range | null;
  /** Allowed `generation_config.volume` range, or null when volume cannot be set. */
  volume: Range | null;
  /** Whether streamed responses are offered at all. */
  streaming: boolean;
  /** Voice used when a dialect without a voice field (OpenAI) leaves it out. */
  defaultVoice: string | null;
  languages: string[];
  /** true: `speed` may be other than 1 on a stream too; absent: streams speak at speed 1 (the seeds' rule). */
  speedOnStreams?: boolean;
  /** false: responses of this model never come from or go to the audio cache; absent: they do. */
  cache?: boolean;
  /** Models that serve a request, in order, when this one cannot (synthesis/fallback). */
  fallback?: string[];
  /** This model's voice id → the voice a fallback model lacking it speaks with. */
  fallbackVoices?: Record<string, string>;
  /** Overrides the engine's `firstAudioTimeoutMs` for this model's chain. */
  firstAudioTimeoutMs?: number;
  /** Hedging: the next model runs too once this one has made no audio by then (synthesis/fallback). */
  hedgeAfterMs?: number;
}
