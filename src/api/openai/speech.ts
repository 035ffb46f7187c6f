/**
 * @module api/openai/speech
 * `POST /v1/audio/speech`, the OpenAI dialect, as a thin adapter: the body
 * is translated into the native request (`model` → `model_id`, `input` →
 * `transcript`, `voice` → `{mode: "id", id}`, `response_format` → a fixed
 * output format) and goes through the same parsing, pipeline, billing and
 * cost headers as /tts/bytes. Streaming is chosen by `stream` /
 * `stream_format` in the body, never by Accept (the SDK always sends
 * `application/octet-stream`). Errors use OpenAI's nested shape.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ApiError, toApiError } from '../../errors/api-error.js';
import { classify } from '../../http/errors.js';
import { disconnectSignal } from '../../http/disconnect.js';
import { decodeJsonObject, postOnly } from '../../http/json-body.js';
import type { Services } from '../../services.js';
import { parseCartesiaRequest } from '../cartesia/parse.js';
import { sendAudioStream, sendClip } from '../audio-response.js';
import { openStream } from '../open-stream.js';
import { openAIError } from './errors.js';

/** OpenAI `response_format` → native `output_format`, as documented. */
const RESPONSE_FORMATS: Record<string, Record<string, unknown>> = {
  mp3: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 },
  wav: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 },
  pcm: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
};
const UNSUPPORTED_FORMATS = new Set(['opus', 'aac', 'flac']);

function invalid(code: 'invalid_request' | 'invalid_output_format', reason: string, param: string): ApiError & { param: string } {
  return Object.assign(new ApiError(code, { reason }), { param });
}

/** Builds the native body from an OpenAI one, resolving the configured aliases. */
export function toNativeBody(body: Record<string, unknown>, services: Services): Record<string, unknown> {
  const { modelAliases, voiceAliases } = services.config.openai;
  const model = typeof body.model === 'string' ? (modelAliases[body.model] ?? body.model) : body.model;
  if (typeof model !== 'string' || !model) throw invalid('invalid_request', 'model is required', 'model');
  const format = body.response_format ?? 'mp3';
  if (typeof format !== 'string' || !(format in RESPONSE_FORMATS)) {
    const reason = UNSUPPORTED_FORMATS.has(String(format))
      ? `response_format ${format} is not supported; use mp3, wav or pcm`
      : `response_format must be one of mp3, wav, pcm`;
    throw invalid('invalid_output_format', reason, 'response_format');
  }
  let voice = body.voice;
  if (voice && typeof voice === 'object' && !Array.isArray(voice)) voice = (voice as Record<string, unknown>).id;
  if (voice === undefined || voice === null || voice === '') voice = services.models.get(model)?.defaultVoice ?? undefined;
  const voiceId = typeof voice === 'string' ? (voiceAliases[voice] ?? voice) : voice;
  const streamFormat = body.stream_format ?? 'audio';
  if (streamFormat !== 'audio' && streamFormat !== 'sse') throw invalid('invalid_request', 'stream_format must be audio or sse', 'stream_format');
  if (body.instructions !== undefined && typeof body.instructions !== 'string') throw invalid('invalid_request', 'instructions must be a string', 'instructions');
  return {
    model_id: model,
    transcript: body.input,
    voice: voiceId === undefined ? undefined : typeof voiceId === 'string' ? { mode: 'id', id: voiceId } : voiceId,
    output_format: RESPONSE_FORMATS[format],
    ...(body.speed === undefined || body.speed === null ? {} : { generation_config: { speed: body.speed } }),
    stream: body.stream === true || streamFormat === 'sse',
    // Not an OpenAI field: lets OpenAI-shaped clients use a dictionary too.
    ...(body.pronunciation_dict_id === undefined ? {} : { pronunciation_dict_id: body.pronunciation_dict_id }),
  };
}

function sse(event: Record<string, unknown>): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

export function registerOpenAISpeech(scope: FastifyInstance, services: Services): void {
  scope.setErrorHandler((err, request, reply) => {
    const error = classify(err, services.config.server.bodyLimitBytes);
    if (error.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: error.code }, 'request rejected');
    if (reply.raw.headersSent) return void reply.raw.destroy();
    const param = (err as { param?: string }).param;
    return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(openAIError(error, param));
  });
  postOnly(scope, '/v1/audio/speech');
  scope.post('/v1/audio/speech', async (request, reply) => {
    const caller = await services.gate.authenticate(request);
    const body = decodeJsonObject(request.body);
    const native = toNativeBody(body, services);
    const requestId = String(request.id);
    const synthesis = await parseCartesiaRequest(native, { services, requestId, orgId: caller.orgId });
    const admission = await services.gate.admit(caller, synthesis, 'openai.speech');
    reply.raw.once('close', () => admission.release());
    const signal = disconnectSignal(reply);
    if (!synthesis.streaming) return sendClip(reply, synthesis, admission, signal);
    const opened = await openStream(synthesis, admission, signal);
    if (body.stream_format !== 'sse') return sendAudioStream(reply, synthesis, opened);
    const { costHeaders, pieces } = opened;
    async function* events(): AsyncGenerator<string> {
      let bytes = 0;
      try {
        for await (const piece of pieces) {
          if (piece.audio.length === 0) continue;
          bytes += piece.audio.length;
          yield sse({ type: 'speech.audio.delta', audio: piece.audio.toString('base64') });
        }
        // Usage in OpenAI's fields: characters in, audio samples out.
        const output = Math.round(bytes / 2);
        yield sse({ type: 'speech.audio.done', usage: { input_tokens: synthesis.characters, output_tokens: output, total_tokens: synthesis.characters + output } });
      } catch (err) {
        if (signal.aborted) return;
        yield sse({ type: 'error', ...openAIError(toApiError(err)) });
      }
    }
    return reply.headers(costHeaders).header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache').send(Readable.from(events()));
  });
}
