/**
 * @module api/cartesia/bytes
 * `POST /tts/bytes`. Without `stream` the whole clip is generated, charged
 * (all-or-nothing) and sent with its exact length. With `stream: true` the
 * status is committed only once the first audio exists — an error before
 * that is an ordinary HTTP error — and the body is relayed as it is made.
 */
import type { FastifyInstance } from 'fastify';
import { disconnectSignal } from '../../http/disconnect.js';
import { decodeJsonObject, postOnly } from '../../http/json-body.js';
import type { Services } from '../../services.js';
import { sendAudioStream, sendClip } from '../audio-response.js';
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
    if (!synthesis.streaming) return sendClip(reply, synthesis, admission, signal);
    return sendAudioStream(reply, synthesis, await openStream(synthesis, admission, signal));
  });
}
