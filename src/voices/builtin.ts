/**
 * @module voices/builtin
 * The named built-in voices (stable ids, each an eSpeak voice, variant, pitch
 * and rate) and the generated per-language voices that expose every voice
 * eSpeak NG ships as `espeak-<language>`.
 */
import type { Voice } from './voice.js';

const CREATED_AT = '2026-01-01T00:00:00.000Z';
const DEFAULT_RATE = 175;

export const NAMED_VOICES: Voice[] = [
  {
    id: 'sarah',
    name: 'Sarah',
    description: 'Warm American English female voice; the default voice of omnivoice.',
    gender: 'feminine',
    language: 'en',
    accent: 'american',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-us', variant: 'f3', pitch: 55, rate: DEFAULT_RATE } },
  },
  {
    id: 'michael',
    name: 'Michael',
    description: 'Steady American English male voice.',
    gender: 'masculine',
    language: 'en',
    accent: 'american',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-us', variant: 'm3', pitch: 45, rate: DEFAULT_RATE } },
  },
  {
    id: 'emma',
    name: 'Emma',
    description: 'British English (Received Pronunciation) female voice.',
    gender: 'feminine',
    language: 'en',
    accent: 'british',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-gb-x-rp', variant: 'f2', pitch: 55, rate: 170 } },
  },
  {
    id: 'oliver',
    name: 'Oliver',
    description: 'British English (Received Pronunciation) male voice.',
    gender: 'masculine',
    language: 'en',
    accent: 'british',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-gb-x-rp', variant: 'm1', pitch: 45, rate: 170 } },
  },
  {
    id: 'isla',
    name: 'Isla',
    description: 'Scottish English female voice.',
    gender: 'feminine',
    language: 'en',
    accent: 'scottish',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-gb-scotland', variant: 'f4', pitch: 52, rate: 170 } },
  },
  {
    id: 'jordan',
    name: 'Jordan',
    description: 'Neutral American English voice.',
    gender: 'gender_neutral',
    language: 'en',
    accent: 'american',
    ownerOrgId: null,
    createdAt: CREATED_AT,
    profiles: { espeak: { voice: 'en-us', variant: 'klatt', pitch: 50, rate: DEFAULT_RATE } },
  },
];

/** One entry of eSpeak NG's own voice list (`list_voices()`). */
export interface EspeakListedVoice {
  name: string;
  identifier: string;
  languages: { priority: number; name: string }[];
}

/** `espeak-<language>` voices for every voice eSpeak NG ships. */
export function espeakLanguageVoices(listed: EspeakListedVoice[]): Voice[] {
  const voices: Voice[] = [];
  const seen = new Set<string>();
  for (const entry of listed) {
    const language = (entry.languages[0]?.name ?? entry.identifier.split('/').pop() ?? '').toLowerCase();
    if (!language || seen.has(language)) continue;
    seen.add(language);
    voices.push({
      id: `espeak-${language}`,
      name: `${entry.name} (eSpeak)`,
      description: `eSpeak NG ${entry.name} voice.`,
      gender: 'gender_neutral',
      language,
      accent: null,
      ownerOrgId: null,
      createdAt: CREATED_AT,
      profiles: { espeak: { voice: language, variant: null, pitch: 50, rate: DEFAULT_RATE } },
    });
  }
  return voices;
}
