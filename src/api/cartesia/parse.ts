/**
 * @module api/cartesia/parse
 * Decodes a Cartesia-dialect body (/tts/bytes, /tts/sse, WebSocket messages)
 * into the transport-neutral `SpeechInput`. The body's shape is checked with
 * zod and the first problem is mapped to the documented error code; what the
 * model allows is checked later, by `synthesis/resolve`, for every dialect.
 */
import { z } from 'zod';
import { ApiError } from '../../errors/api-error.js';
import { formatRequestOf } from '../../models/output-format.js';
import { dialogueTranscript, type DialogueTurn } from '../../synthesis/dialogue.js';
import type { SpeechInput } from '../../synthesis/speech-input.js';

/** A voice: its id as a string, `{id}`, or `{mode: "id", id}` (the Cartesia 4.x types dropped `mode`; frameworks still send it). */
export const voiceSchema = z.union([
  z.string().min(1),
  z.looseObject({
    mode: z.literal('id').optional(),
    id: z.string().min(1),
  }),
]);

export const cartesiaBodySchema = z.looseObject({
  model_id: z.string().min(1),
  transcript: z.string().min(1),
  voice: voiceSchema,
  output_format: z.unknown().optional(),
  language: z.string().nullish(),
  generation_config: z.unknown().optional(),
  stream: z.boolean().optional(),
  context_id: z.string().max(256).nullish(),
  add_timestamps: z.boolean().optional(),
  pronunciation_dict_id: z.string().nullish(),
  /** Voicegate's own: false keeps this request out of the audio cache. */
  cache: z.boolean().optional(),
  /** `"ssml"` (Polly's `TextType`) or `"text"`; absent: SSML when the transcript starts with `<speak`. */
  transcript_type: z.enum(['text', 'ssml']).nullish(),
});

/** A WebSocket message: an empty transcript is allowed (it ends or flushes a context). */
const cartesiaMessageSchema = cartesiaBodySchema.extend({ transcript: z.string() });

export type CartesiaBody = z.infer<typeof cartesiaBodySchema>;

/** Order in which field problems are reported when several are present. */
const FIELD_ORDER = ['model_id', 'transcript', 'voice', 'inputs', 'output_format', 'generation_config', 'language', 'stream', 'context_id', 'add_timestamps', 'pronunciation_dict_id', 'cache', 'transcript_type'];

function describe(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return '; got null';
  return `; got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`}`;
}

function shapeError(issue: z.core.$ZodIssue, body: Record<string, unknown>): ApiError {
  const [field] = issue.path as string[];
  switch (field) {
    case 'model_id':
      return new ApiError('invalid_request', { reason: `model_id is required and must be a string${describe(body.model_id)}` });
    case 'transcript':
      return new ApiError('missing_transcript');
    case 'voice':
      return voiceError(body.voice);
    default:
      return new ApiError('invalid_request', { reason: `${issue.path.join('.')}: ${issue.message}` });
  }
}

/** What is wrong with a `voice` the schema refused. */
function voiceError(voice: unknown): ApiError {
  if (voice === '') return new ApiError('missing_voice_id');
  if (typeof voice !== 'object' || voice === null || Array.isArray(voice)) return new ApiError('missing_voice', { reason: describe(voice) });
  const { mode, id } = voice as Record<string, unknown>;
  if (mode !== undefined && mode !== 'id') return new ApiError('unknown_voice_mode', { reason: describe(mode) });
  if (typeof id !== 'string' || id === '') return new ApiError('missing_voice_id');
  return new ApiError('missing_voice', { reason: describe(voice) });
}

/**
 * Decodes a Cartesia body (or, with `message`, a WebSocket message, whose transcript may be empty)
 * into the neutral request. `alwaysStreaming`: SSE and the WebSocket stream whatever `stream` says.
 */
export function parseCartesiaBody(body: unknown, options: { alwaysStreaming?: boolean; message?: boolean } = {}): SpeechInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', { reason: `; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` });
  }
  const fields = body as Record<string, unknown>;
  const parsed = (options.message ? cartesiaMessageSchema : cartesiaBodySchema).safeParse(fields);
  if (!parsed.success) {
    const issues = [...parsed.error.issues].sort(
      (a, b) => rank(a.path[0]) - rank(b.path[0]) || a.path.length - b.path.length,
    );
    throw shapeError(issues[0], fields);
  }
  const data = parsed.data;
  return {
    ...fieldsOf(data, options),
    transcript: data.transcript,
    voiceId: voiceIdOf(data.voice),
    ...(data.transcript_type ? { transcriptType: data.transcript_type } : {}),
  };
}

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

/** `POST /tts/dialogue`: the /tts/bytes body with `inputs` (each a transcript and its voice) for `transcript` and `voice`. */
const dialogueBodySchema = cartesiaBodySchema.omit({ transcript: true, voice: true, transcript_type: true }).extend({
  inputs: z.array(z.looseObject({ transcript: z.string(), voice: voiceSchema, transcript_type: z.enum(['text', 'ssml']).nullish(), language: z.string().nullish() })).min(1),
});

/**
 * Decodes a dialogue body into the neutral request: its turns in order (`synthesis/dialogue`). A
 * problem with a turn names its index; what a turn says and who speaks it are checked when resolved.
 */
export function parseCartesiaDialogue(body: unknown): SpeechInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', { reason: `; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` });
  }
  const fields = body as Record<string, unknown>;
  const parsed = dialogueBodySchema.safeParse(fields);
  if (!parsed.success) {
    const issues = [...parsed.error.issues].sort((a, b) => rank(a.path[0]) - rank(b.path[0]) || a.path.length - b.path.length);
    const issue = issues[0];
    const [field, index, part] = issue.path as (string | number)[];
    if (field !== 'inputs') throw shapeError(issue, fields);
    if (index === undefined) throw new ApiError('invalid_request', { reason: `inputs must be a non-empty array of {transcript, voice}${describe(fields.inputs)}` });
    const input = (fields.inputs as unknown[])[index as number] as Record<string, unknown> | null;
    if (part === 'voice') throw voiceError(input?.voice);
    throw new ApiError('invalid_request', { reason: `inputs[${index}] must be an object with a transcript string and a voice (and transcript_type "text" or "ssml", and a language string, if any)` });
  }
  const data = parsed.data;
  const turns: DialogueTurn[] = data.inputs.map((input) => ({ transcript: input.transcript, voiceId: voiceIdOf(input.voice), ...(input.transcript_type ? { type: input.transcript_type } : {}), ...(input.language ? { language: input.language } : {}) }));
  return { ...fieldsOf(data, {}), transcript: dialogueTranscript(turns), voiceId: turns[0].voiceId, turns };
}

function rank(field: PropertyKey | undefined): number {
  const index = FIELD_ORDER.indexOf(String(field));
  return index < 0 ? FIELD_ORDER.length : index;
}
