/**
 * @module api/elevenlabs/schema
 * ElevenLabs' REST requests as their routes declare them: the path's voice, the query's
 * `output_format`, and the speech and dialogue bodies with every limit the dialect enforces
 * (`seed` 0–4294967295, neighbouring text up to 10,000 characters, `voice_settings` 0–1,
 * `language_code`'s pattern), each refusal with the message ElevenLabs clients have had and its
 * `loc`. The route validates with these and the document is generated from them; the WebSocket
 * checks its `voice_settings` and dictionaries with the same schemas (`parse.ts`). What depends on
 * the model (an `output_format` it does not serve) is checked by `parse.ts`.
 */
import { z } from 'zod';
import { component } from '../../../http/route-schema.js';

/** A setting accepted for its shape, from 0 to 1 (null: as absent). */
const unit = (name: string) =>
  z
    .number({ error: `${name} must be a number from 0 to 1` })
    .min(0, { error: `${name} must be a number from 0 to 1` })
    .max(1, { error: `${name} must be a number from 0 to 1` })
    .nullable()
    .optional();

export const voiceSettingsSchema = z
  .looseObject(
    {
      stability: unit('voice_settings.stability').describe('Accepted.'),
      similarity_boost: unit('voice_settings.similarity_boost').describe('Accepted.'),
      style: unit('voice_settings.style').describe('Accepted.'),
      use_speaker_boost: z.boolean({ error: 'voice_settings.use_speaker_boost must be a boolean' }).nullable().optional().describe('Accepted.'),
      speed: z
        .number({ error: 'voice_settings.speed must be a number from 0.7 to 1.2' })
        .min(0.7, { error: 'voice_settings.speed must be a number from 0.7 to 1.2' })
        .max(1.2, { error: 'voice_settings.speed must be a number from 0.7 to 1.2' })
        .nullable()
        .optional()
        .describe('The speaking rate.'),
    },
    { error: 'voice_settings must be an object or null' },
  )
  .nullable()
  .optional()
  .describe('`speed` applies; the others are accepted.');

export const dictionaryLocatorsSchema = z
  .array(
    z.looseObject(
      {
        pronunciation_dictionary_id: z.string({ error: 'each locator needs a pronunciation_dictionary_id' }).min(1, { error: 'each locator needs a pronunciation_dictionary_id' }),
        version_id: z.string().nullable().optional(),
      },
      { error: 'each locator needs a pronunciation_dictionary_id' },
    ),
    { error: 'pronunciation_dictionary_locators must be a list of at most 3 locators' },
  )
  .max(3, { error: 'pronunciation_dictionary_locators must be a list of at most 3 locators' })
  .nullable()
  .optional()
  .describe('Voicegate dictionaries, applied in order.');

export const textNormalizationSchema = z
  .enum(['auto', 'on', 'off'], { error: 'apply_text_normalization must be auto, on or off' })
  .nullable()
  .optional()
  .describe('`off` turns the normaliser off, `on` on; `auto` leaves the engine’s setting.');

/** Text around a request, accepted for its shape. */
const neighbour = (name: string, max: number) =>
  z
    .string({ error: `${name} must be a string of at most ${max} characters` })
    .max(max, { error: `${name} must be a string of at most ${max} characters` })
    .nullable()
    .optional()
    .describe(`Accepted; at most ${max.toLocaleString('en')} characters.`);

const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** The fields speech and dialogue bodies share, in the order they are checked. */
const shared = {
  language_code: z
    .string({ error: 'language_code must be a language code such as en or pt-BR' })
    .regex(LANGUAGE, { error: 'language_code must be a language code such as en or pt-BR' })
    .meta({ examples: ['en', 'pt-BR'] })
    .nullable()
    .optional()
    .describe('The language to read in, as `language` on `/tts/bytes`; absent: the voice’s.'),
  seed: z
    .int({ error: 'seed must be an integer from 0 to 4294967295' })
    .min(0, { error: 'seed must be an integer from 0 to 4294967295' })
    .max(4294967295, { error: 'seed must be an integer from 0 to 4294967295' })
    .nullable()
    .optional()
    .describe('Accepted.'),
  pronunciation_dictionary_locators: dictionaryLocatorsSchema,
  apply_text_normalization: textNormalizationSchema,
  model_id: z
    .string({ error: 'model_id must be a string' })
    .nullable()
    .optional()
    .describe('A model id, or an ElevenLabs model id mapped by `elevenlabs.modelAliases`; absent or empty: `elevenlabs.defaultModel`.'),
};

export const speechBodySchema = component(
  'ElevenLabsSpeechRequest',
  z
    .looseObject({
      text: z.string({ error: 'missing_transcript' }).min(1, { error: 'missing_transcript' }).describe('The text to speak, within the model’s character limit.'),
      previous_text: neighbour('previous_text', 10_000),
      next_text: neighbour('next_text', 10_000),
      voice_settings: voiceSettingsSchema,
      ...shared,
    })
    .describe('The body of `POST /v1/text-to-speech/{voice_id}` (ElevenLabs’).'),
);

const turn = z.looseObject(
  {
    text: z
      .string({ error: 'each input needs its text, a string' })
      .refine((text) => text.trim() !== '', { error: 'empty_dialogue_turn' })
      .describe('What this turn says (not only blanks).'),
    voice_id: z.string({ error: 'missing_voice_id' }).min(1, { error: 'missing_voice_id' }).describe('Its voice: an id, or an ElevenLabs voice id mapped by `elevenlabs.voiceAliases`.'),
  },
  { error: 'each input needs its text, a string' },
);

const dialogueSettings = z
  .looseObject({ stability: unit('settings.stability'), similarity: unit('settings.similarity') }, { error: 'settings must be an object or null' })
  .nullable()
  .optional()
  .describe('Accepted.');

export const dialogueBodySchema = component(
  'ElevenLabsDialogueRequest',
  z
    .looseObject({
      inputs: z
        .array(turn, { error: 'inputs must be a non-empty list of {text, voice_id}' })
        .min(1, { error: 'inputs must be a non-empty list of {text, voice_id}' })
        .describe('The turns, spoken in order in one piece of audio with `voices.dialogue.pauseMs` between them; at most `voices.dialogue.maxTurns`, their characters together within the model’s limit.'),
      previous_text: neighbour('previous_text', 100),
      future_text: neighbour('future_text', 100),
      settings: dialogueSettings,
      ...shared,
    })
    .describe('The body of `POST /v1/text-to-dialogue` (ElevenLabs’).'),
);

export const voicePathSchema = z.object({
  voice_id: z.string().max(256).describe('A voice id, or an ElevenLabs voice id mapped by `elevenlabs.voiceAliases`.'),
});

export const outputFormatQuerySchema = z.looseObject({
  output_format: z
    .string()
    .optional()
    .describe(
      '`mp3_22050_32`, `mp3_44100_{32,64,96,128,192}` (default `mp3_44100_128`), `pcm_{8000,16000,22050,24000,44100,48000}` (raw 16-bit, `audio/pcm`), `ulaw_8000`, `alaw_8000`, `opus_48000_{32,64,96,128,192}`, `wav_<rate>`; one the model does not serve on the path (a clip or a stream) is `invalid_output_format`.',
    ),
});

export type SpeechBody = z.infer<typeof speechBodySchema>;
export type DialogueBody = z.infer<typeof dialogueBodySchema>;
