/**
 * @module api/cartesia/bytes
 * `POST /tts/bytes`. Without `stream` the whole clip is generated, charged
 * (all-or-nothing) and sent with its exact length. With `stream: true` the
 * status is committed only once the first audio exists — an error before
 * that is an ordinary HTTP error — and the body is relayed as it is made.
 */
import type { FastifyInstance } from 'fastify';
import { postOnly } from '../../../http/json-body.js';
import { binaryContent, errorResponses } from '../../../http/route-schema.js';
import { TTS_ERROR_STATUSES, audioStream, serveSynthesis } from '../../../http/synthesis-route.js';
import type { Services } from '../../../services.js';
import { cartesiaInput } from './parse.js';
import { cartesiaBodySchema, type CartesiaBody } from './schema.js';

const SCHEMA = {
  tags: ['Speech'],
  summary: 'Generate speech (whole clip, or a body streamed as it is made)',
  description:
    'Without `stream` the body is the complete clip, sent once generation has finished. With `"stream": true` the status and headers come with the first audio; an error after it ends the body early.',
  body: cartesiaBodySchema,
  response: {
    200: { description: 'The audio in the requested format.', cost: true, spoken: true, content: binaryContent('audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac', 'application/octet-stream') },
    ...errorResponses('native', TTS_ERROR_STATUSES),
  },
};

export function registerTtsBytes(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/bytes');
  scope.post('/tts/bytes', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true } }, (request, reply) =>
    serveSynthesis(services, request, reply, {
      // The body as the route's schema validated it (a refusal is thrown before decoding).
      decode: ({ body }) => cartesiaInput(body as CartesiaBody),
      endpoint: (input) => (input.streaming ? 'tts.bytes.stream' : 'tts.bytes'),
      stream: (_input, synthesis) => audioStream(synthesis),
    }),
  );
}
