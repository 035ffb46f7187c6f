/**
 * @module api/cartesia/schema
 * The Cartesia-dialect body as `/tts/bytes` and `/tts/sse` declare it: validated by the route and
 * documented from the same schema, each refusal with the code and message its clients have had
 * (`model_id` named with what was sent, `missing_transcript`, a voice's `missing_voice`,
 * `missing_voice_id` or `unknown_voice_mode`), fields in the order their problems are reported.
 * `output_format` and `generation_config` are checked against the model (`invalid_output_format`,
 * `invalid_generation_config`) when the request is resolved; the document gives their shapes.
 */
import { z } from 'zod';
import { component, schemaRef } from '../../../http/route-schema.js';

/** `; got …`: what was sent instead, for a message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return '; got null';
  return `; got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`}`;
}

/** The refusal of a `voice`: `code` or `code: reason` (`http/route-schema.ts`). */
export function voiceRefusal(voice: unknown): string {
  if (voice === '') return 'missing_voice_id';
  if (typeof voice !== 'object' || voice === null || Array.isArray(voice)) return voice === undefined ? 'missing_voice' : `missing_voice: ${describeValue(voice)}`;
  const { mode, id } = voice as Record<string, unknown>;
  if (mode !== undefined && mode !== 'id') return mode === undefined ? 'unknown_voice_mode' : `unknown_voice_mode: ${describeValue(mode)}`;
  if (typeof id !== 'string' || id === '') return 'missing_voice_id';
  return `missing_voice: ${describeValue(voice)}`;
}

/** A voice: its id as a string, `{id}`, or `{mode: "id", id}` (the Cartesia 4.x types dropped `mode`; frameworks still send it). */
export const voiceSchema = z.union(
  [
    z.string().min(1, { error: 'missing_voice_id' }),
    z.looseObject({
      mode: z.literal('id').optional(),
      id: z.string({ error: 'missing_voice_id' }).min(1, { error: 'missing_voice_id' }),
    }),
  ],
  { error: (issue) => voiceRefusal(issue.input) },
);

const container = z.enum(['raw', 'wav', 'mp3', 'opus', 'flac']);
const encoding = z.enum(['pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw']);

export const outputFormatSchema = component(
  'OutputFormat',
  z
    .object({
      container: container.describe('What the model allows is in `GET /models` (`formats.bytes` for clips, `formats.stream` for streams).'),
      encoding: encoding.optional().describe('Required for raw and wav unless the model has a default encoding; not accepted with mp3 or opus.'),
      sample_rate: z.int().min(8000).max(48000).describe('Hz; one of the model’s sample rates (opus: 8000, 12000, 16000, 24000 or 48000).'),
      bit_rate: z
        .int()
        .optional()
        .describe('mp3 and opus only: bits per second, one the model lists (mp3: one LAME can produce at that sample rate; opus: 6000–256000).'),
    })
    .describe('The audio to return; checked against the model’s contract.'),
);

export const generationConfigSchema = component(
  'GenerationConfig',
  z
    .object({
      speed: z.number().optional().describe('Speaking-rate multiplier in the model’s range (0.6–1.5 on the shipped models); must be 1 on a stream.'),
      volume: z.number().optional().describe('Gain in the model’s range (0.5–2.0 on the shipped models).'),
    })
    .describe('Optional generation settings.'),
);

/** The fields of the body, in the order their problems are reported. */
export const cartesiaFields = {
  model_id: z
    .string({ error: (issue) => `model_id is required and must be a string${describeValue(issue.input)}` })
    .min(1, { error: (issue) => `model_id is required and must be a string${describeValue(issue.input)}` })
    .describe('A model id from `GET /models`.'),
  transcript: z
    .string({ error: 'missing_transcript' })
    .min(1, { error: 'missing_transcript' })
    .describe(
      'The text to speak: 1 to the model’s limit of Unicode code points, counted as sent (a `<break>` tag counts one); may hold the inline tags `<break>`, `<speed>`, `<volume>`, `<spell>`, `<emotion>` (docs/api.md). Or an SSML document (`<speak>…</speak>`), counted by its spoken text.',
    ),
  voice: voiceSchema.describe('The voice id: `"<voice-id>"`, `{"id": "<voice-id>"}` or `{"mode": "id", "id": "<voice-id>"}`.'),
  // Checked against the model when the request is resolved, with their own codes; documented by shape.
  output_format: z.unknown().meta(schemaRef('OutputFormat')).optional(),
  generation_config: z.unknown().meta(schemaRef('GenerationConfig')).optional(),
  language: z
    .string()
    .nullish()
    .describe('The language to read in (a BCP 47 tag such as `de`, `fr-CA`, `pt-BR`): numbers, dates, money and units are read as its speakers read them, and the engine speaks it; absent: the voice’s language (docs/api.md#text-normalisation).'),
  stream: z.boolean().optional().describe('`/tts/bytes`: send the body as it is generated.'),
  context_id: z.string().max(256).nullish().describe('Echoed in stream events (default: the request id).'),
  add_timestamps: z.boolean().optional().describe('Stream word timestamps (`timestamps` events).'),
  pronunciation_dict_id: z.string().nullish().describe('One of the organisation’s pronunciation dictionaries; null or "" for none.'),
  cache: z.boolean().optional().describe('Voicegate’s own: `false` neither serves this request from the audio cache nor keeps it there (as `Cache-Control: no-store`).'),
  transcript_type: z.enum(['text', 'ssml']).nullish().describe('`ssml` reads the transcript as SSML, `text` as text with inline tags; absent: SSML when it starts with `<speak`.'),
};

/** The body of `/tts/bytes` and `/tts/sse`. */
export const cartesiaBodySchema = component(
  'TtsRequest',
  z
    .looseObject(cartesiaFields)
    // `output_format` is required too: its absence is refused as the model's formats are (`invalid_output_format`).
    .meta({ required: ['model_id', 'transcript', 'voice', 'output_format'] })
    .describe('The body of `POST /tts/bytes` and `POST /tts/sse`.'),
);

export type CartesiaBody = z.infer<typeof cartesiaBodySchema>;

/** What a dialogue turn's refusal says (a voice has its own), `{index}` being the turn's. */
const TURN_REFUSAL = 'inputs[{index}] must be an object with a transcript string and a voice (and transcript_type "text" or "ssml", and a language string, if any)';
const inputsRefusal = (issue: { input?: unknown }) => `inputs must be a non-empty array of {transcript, voice}${describeValue(issue.input)}`;

/** One turn of a dialogue. */
const dialogueTurnSchema = z.looseObject(
  {
    transcript: z.string({ error: TURN_REFUSAL }).describe('What this turn says: text with inline tags, or an SSML document, as a `/tts/bytes` transcript.'),
    voice: voiceSchema.describe(cartesiaFields.voice.description ?? ''),
    transcript_type: z.enum(['text', 'ssml'], { error: TURN_REFUSAL }).nullish().describe('As on `/tts/bytes`.'),
    language: z.string({ error: TURN_REFUSAL }).nullish().describe('This turn’s language; absent: the request’s, else the turn’s voice’s.'),
  },
  { error: TURN_REFUSAL },
);

/** The body of `POST /tts/dialogue`: `/tts/bytes`' with `inputs` for `transcript` and `voice`, fields in the order their problems are reported. */
export const dialogueBodySchema = component(
  'DialogueRequest',
  z
    .looseObject({
      model_id: cartesiaFields.model_id,
      inputs: z
        .array(dialogueTurnSchema, { error: inputsRefusal })
        .min(1, { error: inputsRefusal })
        .describe('The turns, spoken in order in one piece of audio with `voices.dialogue.pauseMs` (300 ms) between them: at most `voices.dialogue.maxTurns` (100), their characters together within the model’s limit, each with something to speak.'),
      output_format: cartesiaFields.output_format,
      generation_config: cartesiaFields.generation_config,
      language: cartesiaFields.language,
      stream: z.boolean().optional().describe('Answer with `/tts/sse`’s event stream instead of the whole clip.'),
      context_id: cartesiaFields.context_id,
      add_timestamps: z.boolean().optional().describe('With `stream`: `timestamps` events, whose `voices` give each word’s voice.'),
      pronunciation_dict_id: cartesiaFields.pronunciation_dict_id,
      cache: cartesiaFields.cache,
    })
    .meta({ required: ['model_id', 'inputs', 'output_format'] })
    .describe('The body of `POST /tts/dialogue`.'),
);

export type DialogueBody = z.infer<typeof dialogueBodySchema>;

const CAPTIONS_REFUSAL = 'invalid_caption_options: captions must be an object: {"format": "vtt" | "srt", "maxLineChars": 20–80}';

/** The body of `POST /tts/captioned`: `/tts/bytes`' (one clip: no `stream`) and the captions wanted. */
export const captionedBodySchema = component(
  'CaptionedRequest',
  z
    .looseObject({
      ...cartesiaFields,
      stream: z
        .boolean()
        .refine((stream) => stream !== true, { error: 'captioned speech is one clip: leave out stream' })
        .meta({ const: false })
        .optional()
        .describe('Captioned speech is one clip: absent or false.'),
      captions: z
        .looseObject(
          {
            // Checked by `captions/render.ts` (as for the captions a job's query asks for), with their own codes.
            format: z.unknown().meta({ type: 'string', enum: ['vtt', 'srt'], description: '`vtt` (default) or `srt` (`invalid_caption_format` otherwise).' }).optional(),
            maxLineChars: z
              .unknown()
              .meta({ type: 'integer', minimum: 20, maximum: 80, description: 'Display columns a caption line may take (East Asian wide characters count 2); 42 by default (`invalid_caption_options` otherwise).' })
              .optional(),
          },
          { error: CAPTIONS_REFUSAL },
        )
        .nullish()
        .describe('The captions wanted; absent: WebVTT, 42 columns.'),
    })
    .meta({ required: ['model_id', 'transcript', 'voice', 'output_format'] })
    .describe('The body of `POST /tts/captioned`: the `/tts/bytes` body (a whole clip; no `stream`) and the captions wanted.'),
);

export type CaptionedBody = z.infer<typeof captionedBodySchema>;

export const captionedSpeechSchema = component(
  'CaptionedSpeech',
  z.object({
    audio: z.string().describe('The clip, base64.'),
    content_type: z.string().describe('The clip’s content type, as `/tts/bytes` would send it.'),
    captions: z.string().describe('The clip’s captions, WebVTT or SRT.'),
    words: z.object({ words: z.array(z.string()), start: z.array(z.number()), end: z.array(z.number()) }).describe('The words sent, with their times in seconds.'),
  }),
);

/** The body of `POST /tts/normalize`: what `/tts/bytes` would be given, every field but the transcript optional. */
export const normalizeBodySchema = component(
  'NormalizeRequest',
  z
    .looseObject({
      transcript: z.string({ error: 'missing_transcript' }).describe('As on `/tts/bytes`; within the model’s limit (the default model’s without `model_id`).'),
      language: z.string().nullish().describe('As on `/tts/bytes`; absent: the voice’s.'),
      voice: voiceSchema.nullish().describe('As on `/tts/bytes`; absent: the model’s default voice, else a built-in voice in `language`.'),
      model_id: z.string().min(1).nullish().describe('A model id; absent: the default model.'),
      pronunciation_dict_id: z.string().nullish().describe('As on `/tts/bytes`: applied before normalising.'),
      transcript_type: z.enum(['text', 'ssml']).nullish().describe('As on `/tts/bytes`.'),
    })
    .describe('The body of `POST /tts/normalize`.'),
);

export type NormalizeBody = z.infer<typeof normalizeBodySchema>;

export const normalizeResponseSchema = component(
  'NormalizeResponse',
  z
    .object({
      text: z.string().describe('What the engine is given: tags and SSML read, the dictionary and the normaliser applied.'),
      language: z.string().describe('The language the text is read in where SSML names none (lower case).'),
      spans: z
        .array(z.object({ text_from: z.int(), text_to: z.int(), source_from: z.int(), source_to: z.int() }))
        .describe('Each stretch of `text`, in order, with the stretch of the transcript it came from; offsets in Unicode code points. A rewritten token stands for its source as a whole.'),
    })
    .describe('The answer of `POST /tts/normalize`.'),
);
