/**
 * @module http/disconnect
 * An AbortSignal that fires when the client goes away before the response
 * has been fully written, so the engine stops working for nobody.
 */
import type { FastifyReply } from 'fastify';

export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
