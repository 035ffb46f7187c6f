/**
 * @module api/cartesia/dialogue
 * `POST /tts/dialogue`: several speakers in one piece of audio. The body is
 * /tts/bytes' with `inputs` — each a `transcript` and its `voice` — in place
 * of `transcript` and `voice`; the turns are spoken in order, with the
 * configured pause between them (`synthesis/dialogue`). Without `stream` the
 * whole clip is made, charged and sent as /tts/bytes sends it; with
 * `stream: true` the answer is /tts/sse's event stream, its `timestamps`
 * events (`add_timestamps`) naming each word's voice in `voices`.
 */
import type { FastifyInstance } from 'fastify';
import { postOnly } from '../../http/json-body.js';
import { serveSynthesis } from '../../http/synthesis-route.js';
import type { Services } from '../../services.js';
import { parseCartesiaDialogue } from './parse.js';
import { sseAnswer } from './sse.js';

export function registerTtsDialogue(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/dialogue');
  scope.post('/tts/dialogue', (request, reply) =>
    serveSynthesis(services, request, reply, {
      decode: ({ body }) => parseCartesiaDialogue(body),
      endpoint: (input) => (input.streaming ? 'tts.dialogue.stream' : 'tts.dialogue'),
      stream: (_input, synthesis) => sseAnswer(synthesis),
    }),
  );
}
