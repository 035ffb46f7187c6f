/**
 * @module http/errors
 * Renders every failure as the documented error envelope. Fastify's own
 * errors (body too large, bad content) are mapped onto registry codes so a
 * client never sees a shape or code the API docs do not list.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.toBody(String(request.id)));
}

/** Maps a thrown value to the ApiError a client should see. */
export function classify(err: unknown, bodyLimit: number): ApiError {
  if (err instanceof ApiError) return err;
  const fastifyError = err as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', { limit: bodyLimit });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', { reason: '' });
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    if (fastifyError.statusCode === 413) return new ApiError('payload_too_large', { limit: bodyLimit });
    return new ApiError('invalid_request', { reason: fastifyError.message ?? 'bad request' });
  }
  return new ApiError('generation_failed');
}

export function installErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err, request, reply) => {
    const error = classify(err, bodyLimit);
    if (error.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: error.code }, 'request rejected');
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    return sendError(reply, request, error);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, new ApiError('not_found', { method: request.method, path: request.url.split('?')[0] })),
  );
}
