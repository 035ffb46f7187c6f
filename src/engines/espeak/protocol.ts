/**
 * @module engines/espeak/protocol
 * What the eSpeak engine sends its worker threads through the pool, and what
 * they report back: the job, eSpeak's word events, and the ready report with
 * eSpeak's own rate and voice list. The envelope and control block are the
 * pool's (`engines/worker-pool/protocol`).
 */
import type { EspeakListedVoice } from '../../voices/builtin.js';

export interface SynthesizeJob {
  /** Text prepared for eSpeak's SSML reader (`text.ts`). */
  text: string;
  /** eSpeak voice name, with `+variant` when the profile has one. */
  voice: string;
  pitch: number;
  rate: number;
}

/** Word event as eSpeak reports it: 1-based code-point position, length, audio offset in ms. */
export interface RawWordEvent {
  position: number;
  length: number;
  ms: number;
}

export interface EspeakReady {
  sampleRate: number;
  voices: EspeakListedVoice[];
}
