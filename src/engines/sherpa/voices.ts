/**
 * @module engines/sherpa/voices
 * Which speaker of a model speaks a voice. A single-speaker model speaks
 * every voice in its one voice, and brings that voice to the catalogue as a
 * built-in named after the engine; a multi-speaker model maps voices to
 * speaker ids through the engine's `voices` config or the voice's own
 * `sherpa-onnx` profile, and brings built-ins for its first speakers: by
 * their names where the model names them (Kokoro), else `<engine>-<sid>`.
 */
import type { Voice } from '../../voices/voice.js';
import { describeSpeaker } from './speakers.js';

/** `voice.profiles['sherpa-onnx']`: a speaker by name (any model that has it), a speaker id for any sherpa engine, or per engine id. */
export interface SherpaVoiceProfile {
  speaker?: string;
  /** A mix on a Kokoro model (style-mix.ts): speaker ids and shares, largest first. */
  mix?: readonly (readonly [sid: number, weight: number])[];
  sid?: number;
  engines?: Record<string, number>;
}

export interface SpeakerMap {
  engineId: string;
  numSpeakers: number;
  /** Config: voice id → speaker id. */
  voices: Record<string, number>;
  /** Config: the speaker for voices with no mapping (multi-speaker models). */
  defaultSpeaker?: number;
  /** The model's speaker names, in speaker-id order (engines/sherpa/speakers). */
  names?: readonly string[];
}

/** Built-ins a multi-speaker model brings at most; the rest are reached through the `voices` map. */
export const MAX_BUILTIN_SPEAKERS = 128;

const CREATED_AT = '2025-01-01T00:00:00.000Z';

/** The speaker id for `voice`, or undefined when this engine has none for it. */
export function speakerFor(voice: Voice, map: SpeakerMap): number | undefined {
  const inRange = (sid: number | undefined) => (sid !== undefined && Number.isInteger(sid) && sid >= 0 && sid < Math.max(1, map.numSpeakers) ? sid : undefined);
  const configured = inRange(map.voices[voice.id]);
  if (configured !== undefined) return configured;
  const profile = voice.profiles['sherpa-onnx'] as SherpaVoiceProfile | undefined;
  if (profile) {
    const named = profile.speaker !== undefined && map.names ? map.names.indexOf(profile.speaker) : -1;
    if (named >= 0 && inRange(named) !== undefined) return named;
    const sid = profile.engines ? profile.engines[map.engineId] : profile.sid;
    if (inRange(sid) !== undefined) return sid;
  }
  if (map.numSpeakers <= 1) return 0;
  return inRange(map.defaultSpeaker);
}

/**
 * The built-in voices a model brings: its one voice, named after the engine; a speaker per name
 * for a model that names them (Kokoro: `af_bella`, with the language and gender its name says),
 * spoken by any model with a speaker of that name; else `<engine>-<sid>`.
 */
export function builtinSpeakerVoices(map: SpeakerMap, description: string, language: string): Voice[] {
  const voice = (id: string, name: string, profile: SherpaVoiceProfile, details: Partial<Voice> = {}): Voice => ({
    id,
    name,
    description,
    gender: 'gender_neutral',
    language,
    accent: null,
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { 'sherpa-onnx': profile },
    ...details,
  });
  if (map.numSpeakers <= 1) return [voice(map.engineId, map.engineId, { engines: { [map.engineId]: 0 } })];
  const count = Math.min(map.numSpeakers, MAX_BUILTIN_SPEAKERS);
  if (map.names) {
    return map.names.slice(0, count).map((name, sid) => {
      const said = describeSpeaker(name);
      // `<engine>-<sid>`, the id such a speaker had before it was named, still names it in requests.
      return voice(name, said ? `${said.label} (${name})` : name, { speaker: name }, { ...(said ? { language: said.language, gender: said.gender } : {}), aliases: [`${map.engineId}-${sid}`] });
    });
  }
  return Array.from({ length: count }, (_, sid) => voice(`${map.engineId}-${sid}`, `${map.engineId} speaker ${sid}`, { engines: { [map.engineId]: sid } }));
}
