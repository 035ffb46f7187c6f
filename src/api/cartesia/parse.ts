/**
 * @module api/cartesia/parse
 * Turns a Cartesia-dialect body (/tts/bytes, /tts/sse, WebSocket messages)
 * into a `SynthesisRequest`. The body's shape is checked with zod and the
 * first problem is mapped to the documented error code; then the values are
 * checked against the model profile (length, formats, settings) and the
 * voice is resolved for the calling organisation.
 */
import { z } from 'zod';
import { ApiError } from '../../errors/api-error.js';
import { LOCAL_ORG_ID } from '../../http/gate.js';
import { resolveGenerationConfig } from '../../models/generation-config.js';
import { resolveOutputFormat } from '../../models/output-format.js';
import { expandForSpeech } from '../../synthesis/pronunciation.js';
import { countCharacters, type SynthesisRequest } from '../../synthesis/request.js';
import type { Services } from '../../services.js';
import type { PronunciationItem } from '../../store/store.js';

const voiceSchema = z.looseObject({
  mode: z.literal('id'),
  id: z.string().min(1),
});

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
});

/** A WebSocket message: an empty transcript is allowed (it ends or flushes a context). */
const cartesiaMessageSchema = cartesiaBodySchema.extend({ transcript: z.string() });

export type CartesiaBody = z.infer<typeof cartesiaBodySchema>;

/** Order in which field problems are reported when several are present. */
const FIELD_ORDER = ['model_id', 'transcript', 'voice', 'output_format', 'generation_config', 'language', 'stream', 'context_id', 'add_timestamps', 'pronunciation_dict_id'];

function describe(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return '; got null';
  return `; got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`}`;
}

function shapeError(issue: z.core.$ZodIssue, body: Record<string, unknown>): ApiError {
  const [field, sub] = issue.path as string[];
  switch (field) {
    case 'model_id':
      return new ApiError('invalid_request', { reason: `model_id is required and must be a string${describe(body.model_id)}` });
    case 'transcript':
      return new ApiError('missing_transcript');
    case 'voice': {
      const voice = body.voice as Record<string, unknown> | undefined;
      if (sub === 'mode') return new ApiError('unknown_voice_mode', { reason: describe(voice?.mode) || '; got none' });
      if (sub === 'id') return new ApiError('missing_voice_id');
      return new ApiError('missing_voice', { reason: describe(body.voice) });
    }
    default:
      return new ApiError('invalid_request', { reason: `${issue.path.join('.')}: ${issue.message}` });
  }
}

export interface ParseContext {
  services: Services;
  requestId: string;
  /** Calling organisation; null until accounts are enabled. */
  orgId: string | null;
  /** Streaming transport (SSE, WebSocket) regardless of the body's `stream`. */
  alwaysStreaming?: boolean;
  /** WebSocket messages may carry an empty transcript. */
  allowEmptyTranscript?: boolean;
}

export async function parseCartesiaRequest(body: unknown, context: ParseContext): Promise<SynthesisRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', { reason: `; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` });
  }
  const fields = body as Record<string, unknown>;
  const parsed = (context.allowEmptyTranscript ? cartesiaMessageSchema : cartesiaBodySchema).safeParse(fields);
  if (!parsed.success) {
    const issues = [...parsed.error.issues].sort(
      (a, b) => rank(a.path[0]) - rank(b.path[0]) || a.path.length - b.path.length,
    );
    throw shapeError(issues[0], fields);
  }
  const data = parsed.data;
  const { models, engines, voices } = context.services;

  const model = models.get(data.model_id);
  if (!model) {
    throw new ApiError('model_not_found', { reason: `model ${data.model_id} does not exist; available: ${models.list().map((m) => m.id).join(', ')}` });
  }
  const characters = countCharacters(data.transcript);
  if (characters > model.maxTranscriptChars) throw new ApiError('input_too_long', { count: characters, max: model.maxTranscriptChars });

  const streaming = context.alwaysStreaming === true || data.stream === true;
  if (streaming && !model.streaming) throw new ApiError('invalid_request', { reason: `model ${model.id} does not offer streaming` });
  const format = resolveOutputFormat(data.output_format, model, streaming);
  const settings = resolveGenerationConfig(data.generation_config, model, streaming);

  const voice = await voices.get(data.voice.id, context.orgId);
  if (!voice) throw new ApiError('voice_not_found', { id: data.voice.id });
  const engine = engines.get(model.engine);
  if (!engine) throw new ApiError('engine_unavailable');
  if (!engine.supportsVoice(voice)) throw new ApiError('voice_profile_missing', { voice: voice.id, model: model.id, engine: engine.type });

  // Looked up last, so a bad model, format or voice is reported first; empty means none.
  let pronunciation: PronunciationItem[] | null = null;
  if (data.pronunciation_dict_id) {
    const dict = await context.services.store.dicts.get(data.pronunciation_dict_id);
    if (!dict || dict.orgId !== (context.orgId ?? LOCAL_ORG_ID)) throw new ApiError('dict_not_found', { id: data.pronunciation_dict_id });
    pronunciation = dict.items;
  }
  // Limits and billing stay on the transcript as sent; only the spoken text is expanded.
  const text = expandForSpeech(data.transcript, pronunciation);

  return {
    requestId: context.requestId,
    model,
    engine,
    transcript: data.transcript,
    characters,
    text,
    pronunciation,
    voice,
    format,
    language: data.language ?? null,
    settings,
    streaming,
    wordTimestamps: data.add_timestamps === true,
    contextId: data.context_id ?? null,
  };
}

function rank(field: PropertyKey | undefined): number {
  const index = FIELD_ORDER.indexOf(String(field));
  return index < 0 ? FIELD_ORDER.length : index;
}
