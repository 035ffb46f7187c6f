/**
 * @module api/deepgram/schema
 * `POST /v1/speak` as its route declares it: the body `{"text"}` (validated by the route; `text`
 * absent or not a string is Deepgram's `PAYLOAD_ERROR`, nothing to speak its `Input text contains
 * no characters.`) and the query, documented here and checked by `parse.ts` against Deepgram's
 * table of combinations with Deepgram's own messages (the WebSocket shares those checks).
 */
import { z } from 'zod';
import { component } from '../../../http/route-schema.js';

export const deepgramSpeakBodySchema = component(
  'DeepgramSpeakRequest',
  z
    .looseObject({
      text: z
        .string({ error: 'text is required' })
        .refine((text) => text.trim().length > 0, { error: 'missing_transcript' })
        .meta({ minLength: 1 })
        .describe('The text to speak.'),
    })
    .describe('The body of `POST /v1/speak` (or the text itself as `text/plain`).'),
);

export type DeepgramSpeakBody = z.infer<typeof deepgramSpeakBodySchema>;

/** A query parameter: documented by its shape, checked by `parse.ts` with Deepgram's messages. */
const documented = (schema: Record<string, unknown>, description: string) => z.unknown().meta({ ...schema, description }).optional();

export const deepgramSpeakQuerySchema = z.looseObject({
  model: documented({ type: 'string' }, 'An Aura name mapped by `deepgram.models`, or `aura-2-<voice_id>-<lang>` for any voice; absent: `aura-asteria-en`.'),
  encoding: documented({ type: 'string', enum: ['linear16', 'mulaw', 'alaw', 'mp3', 'opus', 'flac', 'aac'] }, 'Deepgram’s encoding (default mp3); `aac` is refused (400 `Unsupported audio format`).'),
  container: documented({ type: 'string', enum: ['wav', 'none', 'ogg'] }, 'wav (default) or none for linear16, mulaw and alaw; ogg for opus.'),
  sample_rate: documented({ type: 'integer' }, 'linear16: 8000, 16000, 24000, 32000, 48000; mulaw/alaw: 8000, 16000; flac: 8000, 16000, 22050, 32000, 48000; mp3 22050 and opus 48000 fixed.'),
  bit_rate: documented({ type: 'integer' }, 'mp3: 32000 or 48000 (default); opus: 32000, 64000, 96000, 128000 or 192000.'),
  speed: documented({ type: 'number' }, 'The speaking rate, within the mapped model’s range.'),
  tag: documented({ type: 'string' }, 'Accepted.'),
});
