/**
 * @module api/deepgram/speech
 * Deepgram's REST text-to-speech, `POST /v1/speak`: the query and `{"text"}`
 * decoded by `parse.ts`, then the same session, pipeline, billing and cost
 * headers as every dialect, the body streamed as it is made, typed as
 * Deepgram types it (`audio/l16;rate=24000`, `audio/wav`, `audio/mpeg`, …).
 * Beside Voicegate's own headers come Deepgram's, both the Aura-1 set
 * (`dg-request-id`, `dg-model-name`, `dg-model-uuid`, `dg-char-count`) and
 * the Aura-2 set (`x-dg-request-id`, `x-dg-model-name`, `x-dg-characters`).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { serveSynthesis, type SynthesisRoute } from '../../../http/synthesis-route.js';
import { binaryContent, errorResponses } from '../../../http/route-schema.js';
import { presentedKey } from '../../../http/credentials.js';
import { postOnly } from '../../../http/json-body.js';
import type { Services } from '../../../services.js';
import { parseDeepgramRequest, type DeepgramContext, type DeepgramInput } from './parse.js';
import { deepgramSpeakBodySchema, deepgramSpeakQuerySchema, type DeepgramSpeakBody } from './schema.js';

const SCHEMA = {
  tags: ['Deepgram'],
  summary: 'Generate speech (Deepgram-compatible)',
  description:
    'Deepgram’s Aura REST: the query names the model and format, the body `{"text"}`; the audio streams as it is made. The key as `Authorization: Token <key>` (any case) or `Bearer`. Errors in Deepgram’s shape.',
  querystring: deepgramSpeakQuerySchema,
  body: deepgramSpeakBodySchema,
  // The text itself is a body too.
  consumes: ['application/json', 'text/plain'],
  response: {
    200: {
      description: 'The audio, typed as Deepgram types it.',
      cost: true, spoken: true,
      headers: {
        'dg-request-id': { description: 'The request’s UUID (also `x-dg-request-id`).', schema: { type: 'string', format: 'uuid' } },
        'dg-model-name': { description: 'The Aura name asked for (also `x-dg-model-name`).', schema: { type: 'string' } },
        'dg-model-uuid': { description: 'A stable UUID of the name.', schema: { type: 'string', format: 'uuid' } },
        'dg-char-count': { description: 'The characters of the text (also `x-dg-characters`).', schema: { type: 'string' } },
      },
      content: binaryContent('audio/mpeg', 'audio/wav', 'audio/flac', 'audio/l16;rate=24000', 'audio/mulaw;rate=8000', 'audio/alaw;rate=8000', 'audio/ogg;codecs=opus'),
    },
    ...errorResponses('deepgram', [400, 401, 402, 403, 413, 415, 429, 503]),
  },
};

/** The UUID of each request (`dg-request-id`, and `request_id` in an error), by its message. */
const REQUEST_IDS = new WeakMap<IncomingMessage, string>();

export function deepgramRequestId(raw: IncomingMessage): string {
  let id = REQUEST_IDS.get(raw);
  if (!id) REQUEST_IDS.set(raw, (id = randomUUID()));
  return id;
}

/**
 * The credential as Deepgram's clients send it: `Authorization: Token <key>` (the scheme in any
 * case), or `Bearer <token>` as every dialect takes it.
 */
export function deepgramKey(headers: IncomingHttpHeaders): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Token\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return presentedKey(headers, '', false);
}

/** A stable UUID for a model name (`dg-model-uuid`, `Metadata.model_uuid`): the name's SHA-1 as a version-5-shaped UUID. */
export function modelUuid(name: string): string {
  const hash = createHash('sha1').update(`voicegate-deepgram-model:${name}`).digest('hex');
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-5${hash.slice(13, 16)}-${((parseInt(hash[16], 16) & 3) | 8).toString(16)}${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
}

/** Deepgram's response headers, both sets. */
export function deepgramHeaders(requestId: string, model: string, characters: number): Record<string, string> {
  return {
    'dg-request-id': requestId,
    'dg-model-name': model,
    'dg-model-uuid': modelUuid(model),
    'dg-char-count': String(characters),
    'x-dg-request-id': requestId,
    'x-dg-model-name': model,
    'x-dg-characters': String(characters),
    'access-control-expose-headers': 'dg-model-name,dg-model-uuid,dg-char-count,dg-request-id,dg-error,x-dg-request-id,x-dg-model-name,x-dg-characters',
  };
}

export function registerDeepgramSpeech(scope: FastifyInstance, services: Services, context: DeepgramContext): void {
  postOnly(scope, '/v1/speak');
  scope.post('/v1/speak', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true, credentials: ['deepgramToken'] } }, (request, reply) => {
    const requestId = deepgramRequestId(request.raw);
    const route: SynthesisRoute<DeepgramInput> = {
      credential: deepgramKey,
      // The body as the route's schema validated it (a refusal is thrown before decoding).
      decode: ({ body, query }) => parseDeepgramRequest({ body: body as DeepgramSpeakBody, query }, context),
      endpoint: () => 'deepgram.speak',
      headers: (input, synthesis) => deepgramHeaders(requestId, input.aura.name, synthesis.characters),
      stream: (input) => ({
        contentType: input.format.contentType,
        framing: { piece: (piece) => (piece.audio.length > 0 ? [piece.audio] : []), done: () => [], error: () => null },
      }),
    };
    return serveSynthesis(services, request, reply, route);
  });
}
