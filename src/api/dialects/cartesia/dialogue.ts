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
import { postOnly } from '../../../http/json-body.js';
import { binaryContent, errorResponses, schemaRef } from '../../../http/route-schema.js';
import { TTS_ERROR_STATUSES, serveSynthesis } from '../../../http/synthesis-route.js';
import type { Services } from '../../../services.js';
import { cartesiaDialogueInput } from './parse.js';
import { dialogueBodySchema, type DialogueBody } from './schema.js';
import { sseAnswer } from './sse.js';

const SCHEMA = {
  tags: ['Speech'],
  summary: 'Generate a dialogue: several speakers in one piece of audio',
  description:
    'Each input’s transcript in its own voice, in order, with the configured pause between turns (`voices.dialogue.pauseMs`, 300 ms). Without `stream` the body is the whole clip, as `/tts/bytes` sends it; with `"stream": true`, `/tts/sse`’s event stream, its `timestamps` events naming each word’s voice. Charged the turns’ characters together.',
  body: dialogueBodySchema,
  response: {
    200: {
      description: 'The audio in the requested format, or an event stream of `StreamEvent`s.',
      cost: true, spoken: true,
      content: { ...binaryContent('audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac', 'application/octet-stream'), 'text/event-stream': { schema: schemaRef('StreamEvent') } },
    },
    ...errorResponses('native', TTS_ERROR_STATUSES),
  },
};

export function registerTtsDialogue(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/dialogue');
  scope.post('/tts/dialogue', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true } }, (request, reply) =>
    serveSynthesis(services, request, reply, {
      // The body as the route's schema validated it (a refusal is thrown before decoding).
      decode: ({ body }) => cartesiaDialogueInput(body as DialogueBody),
      endpoint: (input) => (input.streaming ? 'tts.dialogue.stream' : 'tts.dialogue'),
      stream: (_input, synthesis) => sseAnswer(synthesis),
    }),
  );
}
