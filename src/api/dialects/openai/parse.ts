/**
 * @module api/openai/parse
 * Decodes an OpenAI `/v1/audio/speech` body, as its route schema
 * (`schema.ts`) has validated it, into the transport-neutral
 * `SpeechInput`: `model` and `voice` through the configured aliases (a
 * missing voice is the model's default), `input` as the transcript,
 * `response_format` as a fixed output format, `speed` as generation config.
 * Streaming is chosen by `stream` / `stream_format`, never by Accept (the
 * SDK always sends `application/octet-stream`). Errors carry the OpenAI
 * field at fault as `param`; a `response_format` the model refuses (on a
 * clip, or a stream) is answered with the `response_format`s it takes there.
 */
import type { Config } from '../../../config/schema.js';
import { ApiError } from '../../../errors/api-error.js';
import type { ModelCatalogue } from '../../../models/catalogue.js';
import { formatsServed, outputFormatProblem, type FormatRequest } from '../../../models/output-format.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';
import type { OpenAISpeechBody } from './schema.js';

/** OpenAI `response_format` → output format, as documented in docs/api.md, in OpenAI's order. */
const RESPONSE_FORMATS: Record<string, FormatRequest> = {
  mp3: { container: 'mp3', sampleRate: 44100, bitRate: 128000 },
  // Ogg Opus at 48 kHz, as OpenAI sends it; a model whose profile has no opus (`omnivoice`) refuses it.
  opus: { container: 'opus', sampleRate: 48000, bitRate: 64000 },
  wav: { container: 'wav', encoding: 'pcm_s16le', sampleRate: 24000 },
  pcm: { container: 'raw', encoding: 'pcm_s16le', sampleRate: 24000 },
};
const UNSUPPORTED_FORMATS = new Set(['aac', 'flac']);

type Fault = ApiError & { param: string };

function fault(error: ApiError, param: string): Fault {
  return Object.assign(error, { param });
}

function invalid(code: 'invalid_request' | 'invalid_output_format', reason: string, param: string): Fault {
  return fault(new ApiError(code, { reason }), param);
}

/** `a, b or c`. */
function either(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

export interface OpenAIParseContext {
  models: ModelCatalogue;
  aliases: Config['openai'];
}

export interface OpenAISpeechInput extends SpeechInput {
  /** `stream_format: "sse"`: audio deltas as events instead of a byte stream. */
  sse: boolean;
}

export function parseOpenAIBody(body: OpenAISpeechBody, context: OpenAIParseContext): OpenAISpeechInput {
  const { modelAliases, voiceAliases } = context.aliases;
  const model = modelAliases[body.model] ?? body.model;
  const streamFormat = body.stream_format ?? 'audio';
  const streaming = body.stream === true || streamFormat === 'sse';
  const format = body.response_format ?? 'mp3';
  // The response_formats this model takes on this path (a clip or a stream); every one when the model is unknown (refused later).
  const profile = context.models.get(model);
  const served = profile ? formatsServed(RESPONSE_FORMATS, profile, streaming) : Object.keys(RESPONSE_FORMATS);
  if (typeof format !== 'string' || !(format in RESPONSE_FORMATS)) {
    const reason = UNSUPPORTED_FORMATS.has(String(format))
      ? `response_format ${format} is not supported; use ${either(served)}`
      : `response_format must be ${either(served)}${profile ? ` for ${String(body.model)}` : ''}`;
    throw invalid('invalid_output_format', reason, 'response_format');
  }
  if (profile && outputFormatProblem(RESPONSE_FORMATS[format], profile, streaming)) {
    const path = streaming ? ' when streaming' : '';
    const use = served.length ? `use ${either(served)}` : `it serves none of ${either(Object.keys(RESPONSE_FORMATS))} there`;
    throw invalid('invalid_output_format', `response_format ${format} is not available for ${String(body.model)}${path}; ${use}`, 'response_format');
  }
  const named = typeof body.voice === 'object' && body.voice !== null ? body.voice.id : body.voice;
  const voice = named === undefined || named === null || named === '' ? (profile?.defaultVoice ?? undefined) : named;
  if (!voice) throw fault(new ApiError('missing_voice', { reason: '' }), 'voice');
  // Not an OpenAI field: word timings as `speech.word_timestamps` events, which only an event stream can carry.
  if (body.timestamps === true && streamFormat !== 'sse') throw invalid('invalid_request', 'timestamps come as speech.word_timestamps events: set stream_format to sse', 'timestamps');
  const transcriptType = body.transcript_type ?? undefined;
  return {
    ...(transcriptType ? { transcriptType } : {}),
    modelId: model,
    ...(model !== body.model ? { modelNamed: body.model } : {}),
    transcript: body.input,
    voiceId: voiceAliases[voice] ?? voice,
    outputFormat: RESPONSE_FORMATS[format],
    generationConfig: body.speed === undefined || body.speed === null ? undefined : { speed: body.speed },
    // Not an OpenAI field: the language to read in (without it the voice decides).
    language: body.language || null,
    streaming,
    sse: streamFormat === 'sse',
    wordTimestamps: body.timestamps === true,
    contextId: null,
    // Not an OpenAI field: lets OpenAI-shaped clients use a dictionary too.
    pronunciationDictId: body.pronunciation_dict_id || null,
    // Not an OpenAI field either: false keeps this request out of the audio cache.
    cache: body.cache !== false,
  };
}
