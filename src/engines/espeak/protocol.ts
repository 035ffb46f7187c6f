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
  /**
   * A variant the worker writes into eSpeak's data (once) before speaking: `from`'s (or none)
   * with its pitch range in Hz set to `pitch`; `voice` names it after the `+`. A mix's, whose
   * voices' pitch ranges are averaged (`pool.ts`, `mixProfiles`).
   */
  variant?: { name: string; from: string | null; pitch: [number, number] };
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
  /** The pitch range (Hz, low and high) each variant file and each voice's file sets, where it sets one. */
  pitchRanges: { variants: Record<string, [number, number]>; voices: Record<string, [number, number]> };
}
