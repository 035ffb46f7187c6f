/**
 * @module api/cartesia/bytes
 * `POST /tts/bytes`. Without `stream` the whole clip is generated, charged
 * (all-or-nothing) and sent with its exact length. With `stream: true` the
 * status is committed only once the first audio exists — an error before
 * that is an ordinary HTTP error — and the body is relayed as it is made.
 */
import type { FastifyInstance } from 'fastify';
import { postOnly } from '../../http/json-body.js';
import { audioStream, serveSynthesis } from '../../http/synthesis-route.js';
import type { Services } from '../../services.js';
import { parseCartesiaBody } from './parse.js';

export function registerTtsBytes(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/bytes');
  scope.post('/tts/bytes', (request, reply) =>
    serveSynthesis(services, request, reply, {
      decode: ({ body }) => parseCartesiaBody(body),
      endpoint: (input) => (input.streaming ? 'tts.bytes.stream' : 'tts.bytes'),
      stream: (_input, synthesis) => audioStream(synthesis),
    }),
  );
}
