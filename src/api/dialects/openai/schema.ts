/**
 * @module api/openai/schema
 * The request of `POST /v1/audio/speech` as its route declares it: the body validated by the
 * route (each refusal with the message and code OpenAI clients have always had, the field as
 * `param`) and documented from the same schema. What depends on the model (a `response_format`
 * it does not serve, on a clip or a stream) is checked by `parse.ts`.
 */
import { z } from 'zod';
import { component } from '../../../http/route-schema.js';

/** OpenAI's `response_format` names, in its order. */
export const OPENAI_FORMATS = ['mp3', 'opus', 'wav', 'pcm'] as const;

export const openAISpeechBody = component(
  'OpenAISpeechRequest',
  z
    .looseObject({
      model: z
        .string({ error: 'model is required' })
        .min(1, { error: 'model is required' })
        .describe('A model id, or an OpenAI name mapped by `openai.modelAliases` (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`).'),
      input: z.string({ error: 'missing_transcript' }).min(1, { error: 'missing_transcript' }).describe('The text to speak, within the model’s character limit (`input_too_long`).'),
      stream_format: z.enum(['audio', 'sse'], { error: 'stream_format must be audio or sse' }).optional().describe('sse: `speech.audio.delta` events, then `speech.audio.done`.'),
      // Refused by `parse.ts` with the formats the model serves; the document lists OpenAI's names.
      response_format: z
        .unknown()
        .meta({ type: 'string', enum: [...OPENAI_FORMATS] })
        .optional()
        .describe('mp3 (default; 44.1 kHz, 128 kbps), opus (Ogg Opus, 48 kHz, 64 kbps, where the model allows it), wav or pcm (16-bit, 24 kHz); a format the model does not serve on this path (a clip or a stream) is `invalid_output_format`.'),
      voice: z
        .union([z.string(), z.looseObject({ id: z.string() })], { error: 'missing_voice' })
        .nullable()
        .optional()
        .describe('A voice id, or an OpenAI name mapped by `openai.voiceAliases`; absent: the model’s default voice.'),
      instructions: z.string({ error: 'instructions must be a string' }).optional().describe('Accepted.'),
      pronunciation_dict_id: z.string({ error: 'pronunciation_dict_id must be a string' }).nullable().optional().describe('As on `/tts/bytes`.'),
      cache: z.boolean({ error: 'cache must be a boolean' }).nullable().optional().describe('As on `/tts/bytes`: `false` keeps this request out of the audio cache.'),
      language: z.string({ error: 'language must be a language code such as de or pt-BR' }).nullable().optional().describe('Voicegate’s own, as on `/tts/bytes`: the language to read in; absent: the voice’s.'),
      timestamps: z
        .boolean({ error: 'timestamps must be a boolean' })
        .meta({ default: false })
        .nullable()
        .optional()
        .describe('Voicegate’s own, with `stream_format: "sse"` only: `speech.word_timestamps` events carry the words sent with their times, beside `speech.audio.delta`.'),
      transcript_type: z.enum(['text', 'ssml'], { error: 'transcript_type must be text or ssml' }).nullable().optional().describe('As on `/tts/bytes`: `ssml` reads `input` as SSML.'),
      speed: z
        .number({ error: 'invalid_generation_config: speed must be a number' })
        .nullable()
        .optional()
        .describe('Within the model’s speed range (`invalid_generation_config` outside it); must be 1 when streaming.'),
      stream: z.boolean({ error: 'stream must be a boolean' }).nullable().optional().describe('Relay the audio as it is made (wav or pcm).'),
    })
    // `timestamps: true` needs `stream_format: "sse"` (checked by `parse.ts`).
    .meta({ if: { properties: { timestamps: { const: true } }, required: ['timestamps'] }, then: { properties: { stream_format: { const: 'sse' } }, required: ['stream_format'] } })
    .describe('The body of `POST /v1/audio/speech` (OpenAI’s).'),
);

export type OpenAISpeechBody = z.infer<typeof openAISpeechBody>;
