/**
 * @module api/cartesia/sse
 * `POST /tts/sse`: the /tts/bytes body, answered as server-sent events —
 * `chunk` events with base64 audio, `timestamps` when asked, and a final
 * `done`; a failure after the stream opened is an `error` event, after which
 * the body ends (the SDK stops only when the body ends). Only `data:` lines
 * with JSON are sent: the SDK parses every event as JSON.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { toApiError } from '../../errors/api-error.js';
import { disconnectSignal } from '../../http/disconnect.js';
import { decodeJsonObject, postOnly } from '../../http/json-body.js';
import type { Services } from '../../services.js';
import { openStream } from '../open-stream.js';
import { chunkEvent, doneEvent, errorEvent, timestampsEvent, type StreamEvent } from './events.js';
import { parseCartesiaRequest } from './parse.js';

function frame(event: StreamEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

export function registerTtsSse(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/sse');
  scope.post('/tts/sse', async (request, reply) => {
    const caller = await services.gate.authenticate(request);
    const body = decodeJsonObject(request.body);
    const requestId = String(request.id);
    const synthesis = await parseCartesiaRequest(body, { services, requestId, orgId: caller.orgId, alwaysStreaming: true });
    const admission = await services.gate.admit(caller, synthesis, 'tts.sse');
    reply.raw.once('close', () => admission.release());
    const signal = disconnectSignal(reply);
    const { costHeaders, pieces } = await openStream(synthesis, admission, signal);
    const contextId = synthesis.contextId ?? requestId;
    const log = request.log;

    async function* events(): AsyncGenerator<string> {
      try {
        for await (const piece of pieces) {
          if (piece.audio.length > 0) yield frame(chunkEvent(contextId, piece.audio, piece.stepTime));
          if (piece.words && synthesis.wordTimestamps) yield frame(timestampsEvent(contextId, piece.words));
        }
        yield frame(doneEvent(contextId));
      } catch (err) {
        if (signal.aborted) return;
        const error = toApiError(err);
        if (error.status >= 500) log.error({ err }, 'stream failed after it opened');
        yield frame(errorEvent(contextId, error, requestId));
      }
    }
    return reply
      .headers(costHeaders)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      .send(Readable.from(events()));
  });
}
