/**
 * @module config/sections/deepgram
 * The Deepgram dialect: Aura model names (`aura-2-thalia-en`, `aura-asteria-en`) → a model and a
 * voice here, and the model that `aura-2-<voice_id>-<lang>` names speak on.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

type Gender = 'f' | 'm';

/**
 * Deepgram's published Aura voices by language and gender. English ones go to the built-in voice
 * of the same gender (British ones to the British voices); other languages to eSpeak NG's voice of
 * that language, which has no gender.
 */
const AURA_1: Record<string, Gender> = {
  angus: 'm', arcas: 'm', asteria: 'f', athena: 'f', helios: 'm', hera: 'f',
  luna: 'f', orion: 'm', orpheus: 'm', perseus: 'm', stella: 'f', zeus: 'm',
};
const BRITISH = new Set(['athena', 'helios', 'pandora', 'draco', 'hyperion']);
const AURA_2: Record<string, Record<string, Gender>> = {
  en: {
    amalthea: 'f', andromeda: 'f', apollo: 'm', arcas: 'm', aries: 'm', asteria: 'f', athena: 'f', atlas: 'm',
    aurora: 'f', callista: 'f', cora: 'f', cordelia: 'f', delia: 'f', draco: 'm', electra: 'f', harmonia: 'f',
    helena: 'f', hera: 'f', hermes: 'm', hyperion: 'm', iris: 'f', janus: 'f', juno: 'f', jupiter: 'm',
    luna: 'f', mars: 'm', minerva: 'f', neptune: 'm', odysseus: 'm', ophelia: 'f', orion: 'm', orpheus: 'm',
    pandora: 'f', phoebe: 'f', pluto: 'm', saturn: 'm', selene: 'f', thalia: 'f', theia: 'f', vesta: 'f', zeus: 'm',
  },
  es: {
    agustina: 'f', alvaro: 'm', antonia: 'f', aquila: 'm', carina: 'f', celeste: 'f', diana: 'f', estrella: 'f',
    gloria: 'f', javier: 'm', luciano: 'm', nestor: 'm', olivia: 'f', selena: 'f', silvia: 'f', sirio: 'm', valerio: 'm',
  },
  it: { cesare: 'm', cinzia: 'f', demetra: 'f', dionisio: 'm', elio: 'm', flavio: 'm', livia: 'f', maia: 'f', melia: 'f', perseo: 'm' },
  nl: { beatrix: 'f', cornelia: 'f', daphne: 'f', hestia: 'f', lars: 'm', leda: 'f', rhea: 'f', roman: 'm', sander: 'm' },
  de: { aurelia: 'f', elara: 'f', fabian: 'm', julius: 'm', kara: 'f', lara: 'f', viktoria: 'f' },
  ja: { ama: 'f', ebisu: 'm', fujin: 'm', izanami: 'f', uzume: 'f' },
  fr: { agathe: 'f', hector: 'm' },
};
/** eSpeak NG's voice for each Aura language other than English. */
const ESPEAK: Record<string, string> = { es: 'espeak-es', it: 'espeak-it', nl: 'espeak-nl', de: 'espeak-de', ja: 'espeak-ja', fr: 'espeak-fr-fr' };

const MODEL = 'voicegate-1.0';

function english(name: string, gender: Gender): string {
  if (BRITISH.has(name)) return gender === 'f' ? 'emma' : 'oliver';
  return gender === 'f' ? 'sarah' : 'michael';
}

function auraDefaults(): Record<string, { model: string; voice: string }> {
  const table: Record<string, { model: string; voice: string }> = {};
  for (const [name, gender] of Object.entries(AURA_1)) table[`aura-${name}-en`] = { model: MODEL, voice: english(name, gender) };
  for (const [lang, voices] of Object.entries(AURA_2)) {
    for (const [name, gender] of Object.entries(voices)) {
      table[`aura-2-${name}-${lang}`] = { model: MODEL, voice: lang === 'en' ? english(name, gender) : ESPEAK[lang] };
    }
  }
  return table;
}

const DEEPGRAM_DEFAULTS = { models: auraDefaults(), model: MODEL };

const deepgramSchema = z
  .object({
    /** Aura model names an unchanged integration sends → the model and voice that speak them here. */
    models: z.record(z.string(), z.object({ model: z.string().min(1), voice: z.string().min(1) }).strict()).default(DEEPGRAM_DEFAULTS.models),
    /** The model of `aura-2-<voice_id>-<lang>`, the name every voice here answers to. */
    model: z.string().min(1).default(DEEPGRAM_DEFAULTS.model),
  })
  .strict();

export const deepgramSection = defineSection('deepgram', deepgramSchema.default(DEEPGRAM_DEFAULTS));
