/**
 * @module api/cartesia/sse
 * `POST /tts/sse`: the /tts/bytes body, answered as server-sent events —
 * `chunk` events with base64 audio, `timestamps` when asked, and a final
 * `done`; a failure after the stream opened is an `error` event, after which
 * the body ends (the SDK stops only when the body ends). Only `data:` lines
 * with JSON are sent: the SDK parses every event as JSON.
 */
import type { FastifyInstance } from 'fastify';
import { postOnly } from '../../../http/json-body.js';
import { TTS_ERROR_STATUSES, serveSynthesis, type StreamAnswer } from '../../../http/synthesis-route.js';
import { errorResponses, schemaRef } from '../../../http/route-schema.js';
import { cartesiaBodySchema, type CartesiaBody } from './schema.js';
import type { SynthesisRequest } from '../../../synthesis/request.js';
import type { Services } from '../../../services.js';
import { SSE_HEADERS, sseFrame, sseFrameWithAudio } from '../../../http/audio-json.js';
import { chunkEvent, doneEvent, errorEvent, markTimestampsEvent, timestampsEvent, type StreamEvent } from './events.js';
import { cartesiaInput } from './parse.js';

const SCHEMA = {
  tags: ['Speech'],
  summary: 'Generate speech as server-sent events',
  description:
    'Every event is one `data:` line of JSON (a `StreamEvent`: `chunk`, `timestamps`, `mark_timestamps`, `done` or `error`) followed by a blank line; the stream ends after `done` or `error`. Errors before the first audio are ordinary HTTP errors.',
  body: cartesiaBodySchema,
  response: {
    200: { description: 'An event stream of `StreamEvent`s.', cost: true, spoken: true, content: { 'text/event-stream': { schema: schemaRef('StreamEvent') } } },
    ...errorResponses('native', TTS_ERROR_STATUSES),
  },
};

const frame: (event: StreamEvent) => string = sseFrame;

/** A chunk's frame as bytes: its audio copied in, not run through a UTF-8 encoder (http/audio-json). */
function chunkFrame(event: StreamEvent): Buffer {
  return sseFrameWithAudio(event, 'data');
}

/** The event stream of a synthesis: `/tts/sse`'s, and `/tts/dialogue`'s with `stream: true`. */
export function sseAnswer(synthesis: SynthesisRequest): StreamAnswer {
  const contextId = synthesis.contextId ?? synthesis.requestId;
  return {
    contentType: 'text/event-stream; charset=utf-8',
    headers: SSE_HEADERS,
    framing: {
      piece(piece) {
        const frames: (string | Buffer)[] = [];
        // A mark comes before the audio that starts where it stands.
        if (piece.marks) frames.push(frame(markTimestampsEvent(contextId, piece.marks)));
        if (piece.audio.length > 0) frames.push(chunkFrame(chunkEvent(contextId, piece.audio, piece.stepTime)));
        if (piece.words && synthesis.wordTimestamps) frames.push(frame(timestampsEvent(contextId, piece.words)));
        return frames;
      },
      done: (served) => [frame(doneEvent(contextId, served.model))],
      error: (error) => [frame(errorEvent(contextId, error, synthesis.requestId))],
    },
  };
}

export function registerTtsSse(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/sse');
  scope.post('/tts/sse', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true } }, (request, reply) =>
    serveSynthesis(services, request, reply, {
      decode: ({ body }) => cartesiaInput(body as CartesiaBody, { alwaysStreaming: true }),
      endpoint: () => 'tts.sse',
      stream: (_input, synthesis) => sseAnswer(synthesis),
    }),
  );
}
