/**
 * @module synthesis/language
 * The language a request is read in, decided once for the normaliser, the
 * engine and the timestamps, in this order: SSML's `xml:lang` for its own
 * span (`ssml.ts`, carried on each text run); the request's own field
 * (Cartesia's `language`, ElevenLabs' `language_code`, the OpenAI
 * extension, a dialogue turn's or a job's); the voice's language (a cloned
 * or mixed voice's too: a mix speaks its largest part's); the model's
 * first language.
 */
import { ApiError } from '../errors/api-error.js';
import type { ModelProfile } from '../models/profile.js';
import type { Voice } from '../voices/voice.js';
import { languageTag } from './ssml.js';

/** A language a client named, as a lower-case BCP 47 tag; `invalid_request` for one not in that shape. */
export function requestedLanguage(value: string | null | undefined, field = 'language'): string | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const tag = languageTag(value);
  if (!tag) throw new ApiError('invalid_request', { reason: `${field} must be a language code such as de, fr-CA or pt-BR; got ${JSON.stringify(value.slice(0, 40))}` });
  return tag;
}

/** The language text is read in when no SSML names one: the request's, else the voice's, else the model's. */
export function decideLanguage(requested: string | null, voice: Voice | null, model: ModelProfile): string {
  return requested ?? (voice?.language ? voiceLanguage(voice.language) : null) ?? languageTag(model.languages[0] ?? 'en') ?? 'en';
}

/**
 * A voice's own language. Some engines name languages outside BCP 47's shape (eSpeak NG's Klingon is
 * `piqd`): such a name is kept as it is, so the voice reads its own language rather than the model's.
 */
function voiceLanguage(value: string): string | null {
  const name = value.trim().replace(/_/gu, '-').toLowerCase();
  return languageTag(name) ?? (/^[a-z0-9]+(?:-[a-z0-9]+)*$/u.test(name) ? name : null);
}
