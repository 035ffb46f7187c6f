/**
 * @module voices/voice
 * The voice record shared by the API and the engines. A voice is usable with
 * a model only when it has a profile for the type of engine bound to that
 * model (built-in voices carry eSpeak profiles), or, for a cloned voice, when
 * that engine clones: it then speaks from the voice's stored clip.
 */

export type Gender = 'feminine' | 'masculine' | 'gender_neutral';

export interface EspeakVoiceProfile {
  /** eSpeak voice name, e.g. `en-us`, `en-gb-x-rp`, `fr`. */
  voice: string;
  /** eSpeak variant, e.g. `f3`, `m1`, `klatt`; null for the voice's own. */
  variant: string | null;
  /** eSpeak pitch 0–99 (50 is the voice's default). */
  pitch: number;
  /** Speaking rate in words per minute at speed 1. */
  rate: number;
  /**
   * The pitch range (Hz, low and high) to speak in instead of the variant's: a mix of voices of
   * different variants speaks in its largest part's variant at its voices' mean range.
   */
  pitchRange?: [number, number];
}

/** Profiles keyed by engine type; cloning-capable engines add theirs for cloned voices. */
export interface VoiceProfiles {
  espeak?: EspeakVoiceProfile;
  [engineType: string]: unknown;
}

export interface Voice {
  id: string;
  name: string;
  description: string;
  gender: Gender;
  /** Primary language, ISO 639 code with optional region (`en`, `en-gb`, `fr`). */
  language: string;
  accent: string | null;
  /** Owning organisation; null for built-in voices, which every organisation sees. */
  ownerOrgId: string | null;
  createdAt: string;
  profiles: VoiceProfiles;
  /** Cloned voices: seconds of reference audio kept. */
  clipSeconds?: number;
  /** Cloned voices: what the clip says, when the uploader gave it (null otherwise). */
  transcript?: string | null;
  /** A mixed voice (voices/mix): its voices with their shares, largest first; its profiles come from the engine that speaks it. */
  mix?: { voice: Voice; weight: number }[];
  /** Built-in voices: other ids that name this voice in requests (an id it had before), never listed. */
  aliases?: readonly string[];
}

/** Whether the voice was cloned from a clip that is kept with it (built-in voices have none). */
export function hasClip(voice: Voice): boolean {
  return voice.clipSeconds !== undefined;
}
