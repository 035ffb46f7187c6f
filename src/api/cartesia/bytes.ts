/**
 * @module api/cartesia/bytes
 * `POST /tts/bytes`. Without `stream` the whole clip is generated, charged
 * (all-or-nothing) and sent with its exact length. With `stream: true` the
 * status is committed only once the first audio exists — an error before
 * that is an ordinary HTTP error — and the body is relayed as it is made.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { CONTENT_TYPES } from '../../audio/format.js';
import { disconnectSignal } from '../../http/disconnect.js';
import { decodeJsonObject, postOnly } from '../../http/json-body.js';
import type { Services } from '../../services.js';
import { renderClip } from '../../synthesis/pipeline.js';
import { openStream } from '../open-stream.js';
import { parseCartesiaRequest } from './parse.js';

export function registerTtsBytes(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/bytes');
  scope.post('/tts/bytes', async (request, reply) => {
    const caller = await services.gate.authenticate(request);
    const body = decodeJsonObject(request.body);
    const synthesis = await parseCartesiaRequest(body, { services, requestId: String(request.id), orgId: caller.orgId });
    const admission = await services.gate.admit(caller, synthesis, synthesis.streaming ? 'tts.bytes.stream' : 'tts.bytes');
    reply.raw.once('close', () => admission.release());
    const signal = disconnectSignal(reply);
    const contentType = CONTENT_TYPES[synthesis.format.container];

    if (!synthesis.streaming) {
      const clip = await renderClip(synthesis, signal);
      const costHeaders = await admission.charge();
      return reply.headers(costHeaders).type(contentType).header('content-length', clip.length).send(clip);
    }

    const { costHeaders, pieces } = await openStream(synthesis, admission, signal);
    async function* relay(): AsyncGenerator<Buffer> {
      for await (const piece of pieces) yield piece.audio;
    }
    return reply.headers(costHeaders).type(contentType).send(Readable.from(relay(), { objectMode: false }));
  });
}
