/**
 * @module api/cartesia/parse
 * Decodes a Cartesia-dialect body (/tts/bytes, /tts/sse, WebSocket messages)
 * into the transport-neutral `SpeechInput`. The body's shape is `schema.ts`'s:
 * the routes that declare it have it validated by Fastify (`cartesiaInput`),
 * the rest (the WebSocket's messages, jobs, previews)
 * check it here, the first problem mapped to the same documented error; what
 * the model allows is checked later, by `synthesis/resolve`, for every dialect.
 */
import { z } from 'zod';
import { ApiError } from '../../../errors/api-error.js';
import { formatRequestOf } from '../../../models/output-format.js';
import { dialogueTranscript, type DialogueTurn } from '../../../synthesis/dialogue.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';
import { problemOf } from '../../../http/route-schema.js';
import { cartesiaBodySchema, voiceSchema, type CartesiaBody, type DialogueBody } from './schema.js';

/** A WebSocket message: an empty transcript is allowed (it ends or flushes a context). */
const cartesiaMessageSchema = cartesiaBodySchema.extend({ transcript: z.string({ error: 'missing_transcript' }) });

/** Order in which field problems are reported when several are present. */
const FIELD_ORDER = ['model_id', 'transcript', 'voice', 'output_format', 'generation_config', 'language', 'stream', 'context_id', 'add_timestamps', 'pronunciation_dict_id', 'cache', 'transcript_type'];

/** The first problem zod found, as the registry error the route's schema would have answered. */
function shapeError(issues: readonly z.core.$ZodIssue[]): ApiError {
  const [issue] = [...issues].sort((a, b) => rank(a.path[0]) - rank(b.path[0]) || a.path.length - b.path.length);
  return problemOf(issue.message, issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part))).error;
}

function notAnObject(body: unknown): ApiError {
  return new ApiError('invalid_json', { reason: `; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` });
}

/**
 * Decodes a Cartesia body (or, with `message`, a WebSocket message, whose transcript may be empty)
 * into the neutral request. `alwaysStreaming`: SSE and the WebSocket stream whatever `stream` says.
 */
export function parseCartesiaBody(body: unknown, options: { alwaysStreaming?: boolean; message?: boolean } = {}): SpeechInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw notAnObject(body);
  const parsed = (options.message ? cartesiaMessageSchema : cartesiaBodySchema).safeParse(body);
  if (!parsed.success) throw shapeError(parsed.error.issues);
  return cartesiaInput(parsed.data, options);
}

/** A body the route's schema (`schema.ts`) has validated, as the neutral request. */
export function cartesiaInput(data: CartesiaBody, options: { alwaysStreaming?: boolean } = {}): SpeechInput {
  return {
    ...fieldsOf(data, options),
    transcript: data.transcript,
    voiceId: voiceIdOf(data.voice),
    ...(data.transcript_type ? { transcriptType: data.transcript_type } : {}),
  };
}

export { voiceSchema };

export function voiceIdOf(voice: z.infer<typeof voiceSchema>): string {
  return typeof voice === 'string' ? voice : voice.id;
}

/** The fields a speech body and a dialogue body share. */
function fieldsOf(data: Pick<CartesiaBody, 'model_id' | 'output_format' | 'generation_config' | 'language' | 'stream' | 'add_timestamps' | 'context_id' | 'pronunciation_dict_id' | 'cache'>, options: { alwaysStreaming?: boolean }): Omit<SpeechInput, 'transcript' | 'voiceId'> {
  return {
    modelId: data.model_id,
    outputFormat: formatRequestOf(data.output_format),
    generationConfig: data.generation_config,
    language: data.language ?? null,
    streaming: options.alwaysStreaming === true || data.stream === true,
    wordTimestamps: data.add_timestamps === true,
    contextId: data.context_id ?? null,
    pronunciationDictId: data.pronunciation_dict_id ?? null,
    cache: data.cache !== false,
  };
}

/** A dialogue body the route's schema (`schema.ts`) has validated, as the neutral request: its turns in order (`synthesis/dialogue`); what a turn says and who speaks it are checked when resolved. */
export function cartesiaDialogueInput(data: DialogueBody): SpeechInput {
  const turns: DialogueTurn[] = data.inputs.map((input) => ({ transcript: input.transcript, voiceId: voiceIdOf(input.voice), ...(input.transcript_type ? { type: input.transcript_type } : {}), ...(input.language ? { language: input.language } : {}) }));
  return { ...fieldsOf(data, {}), transcript: dialogueTranscript(turns), voiceId: turns[0].voiceId, turns };
}

function rank(field: PropertyKey | undefined): number {
  const index = FIELD_ORDER.indexOf(String(field));
  return index < 0 ? FIELD_ORDER.length : index;
}
