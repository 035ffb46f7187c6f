/**
 * @module http/errors
 * Renders every failure as the documented error envelope, with the request
 * id in both the body and the `x-request-id` header (or, for a client pinned
 * to an older `Cartesia-Version`, as that version's plain text). Fastify's own errors
 * (body too large, bad content, a malformed or over-long URL, a request that
 * is not valid HTTP) are mapped onto registry codes, so a client never sees a
 * shape or code the API docs do not list, whichever layer refused it.
 */
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorText } from '../errors/api-error.js';
import { errorShapeFor, type ErrorShape } from './api-version.js';
import { newRequestId } from './request-id.js';
import { fieldProblem } from './route-schema.js';

/**
 * The longest path parameter (a voice, dictionary, model, organisation or
 * key id) the router matches; longer ones are `url_too_long`. Well above any
 * id the server issues, so a long id still gets its route's own 404.
 */
export const MAX_PATH_SEGMENT = 256;

/** Content types given back in a message are cut to this length. */
const MAX_ECHOED_TYPE = 100;

/** The envelope, or for a client pinned to a `Cartesia-Version` before 2026-03-01 the `Title: message` text (`api-version.ts`). */
export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  const id = String(request.id);
  reply.code(error.status).headers(error.headers).header('x-request-id', id);
  if (errorShapeFor(request.headers) === 'text') return reply.type('text/plain; charset=utf-8').send(errorText(error));
  return reply.type('application/json; charset=utf-8').send(error.toBody(id));
}

/** What a scope accepts as a body, for messages that say what to send instead. */
export function acceptedBodyType(scope: FastifyInstance): string {
  return scope.hasContentTypeParser('multipart/form-data') ? 'multipart/form-data' : 'application/json';
}

/** `unsupported_media_type` for a body of `contentType` (absent: none was named). */
export function unsupportedMediaType(contentType: string | undefined, accepted: string): ApiError {
  const type = contentType === undefined || contentType.trim() === '' ? undefined : contentType.slice(0, MAX_ECHOED_TYPE);
  const what = type === undefined ? 'a body without a Content-Type' : `a body of type ${JSON.stringify(type)}`;
  return new ApiError('unsupported_media_type', { reason: `${what} is not accepted here; send ${accepted}` });
}

/**
 * Maps a thrown value to the ApiError a client should see. `request`, when
 * given, lets a content-type refusal name the type sent and the one to use.
 */
export function classify(err: unknown, bodyLimit: number, request?: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  // A route schema's refusal: the registry error naming the field, with its location for the dialects that say it.
  const problem = fieldProblem(err);
  if (problem) return Object.assign(problem.error, { loc: problem.loc, param: problem.loc.length > 1 ? String(problem.loc[1]) : null });
  const fastifyError = err as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', { limit: bodyLimit });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', { reason: '; the body is empty' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', { reason: '; the body is not valid JSON' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return request
        ? unsupportedMediaType(request.headers['content-type'], acceptedBodyType(request.server))
        : new ApiError('unsupported_media_type', { reason: 'the Content-Type header is not a valid media type; send application/json' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', { reason: 'the body is not as long as its Content-Length header says' });
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', {
        reason: 'the URL path is not valid percent-encoded UTF-8; encode each path segment, e.g. with encodeURIComponent',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('url_too_long', { max: MAX_PATH_SEGMENT });
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    if (fastifyError.statusCode === 413) return new ApiError('payload_too_large', { limit: bodyLimit });
    if (fastifyError.statusCode === 415) return unsupportedMediaType(request?.headers['content-type'], request ? acceptedBodyType(request.server) : 'application/json');
    return new ApiError('invalid_request', { reason: fastifyError.message ?? 'bad request' });
  }
  return new ApiError('generation_failed');
}

function logRejection(log: FastifyBaseLogger, err: unknown, error: ApiError): void {
  if (error.status >= 500) log.error({ err }, 'request failed');
  else log.info({ code: error.code }, 'request rejected');
}

/** How a dialect writes an error: its status, headers and body for a registry error (and the thrown value, which may carry dialect details). */
export type ErrorRenderer = (error: ApiError, request: FastifyRequest, thrown: unknown) => { body: unknown; contentType?: string; status?: number };

/**
 * Gives a dialect's scope its own error shape: every error its routes throw (and Fastify's own
 * refusals inside the scope) is classified onto a registry code as everywhere, logged once, and
 * written by `render`, with the request id header. A stream already under way is cut.
 */
export function installErrorRenderer(scope: FastifyInstance, bodyLimit: number, render: ErrorRenderer): void {
  scope.setErrorHandler((err, request, reply) => {
    const error = classify(err, bodyLimit, request);
    logRejection(request.log, err, error);
    if (reply.sent || reply.raw.headersSent) return void reply.raw.destroy();
    const { body, contentType = 'application/json; charset=utf-8', status = error.status } = render(error, request, fieldProblem(err) ? error : err);
    return reply.code(status).headers(error.headers).header('x-request-id', String(request.id)).type(contentType).send(body);
  });
}

export function installErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err, request, reply) => {
    const error = classify(err, bodyLimit, request);
    logRejection(request.log, err, error);
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

/**
 * Fastify's `frameworkErrors` option: errors the router raises before any
 * route or hook runs (a path that is not valid percent-encoding, a path
 * parameter over `MAX_PATH_SEGMENT`). The request already has its id.
 */
export function frameworkErrorHandler(bodyLimit: number) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const error = classify(err, bodyLimit, request);
    logRejection(request.log, err, error);
    sendError(reply, request, error);
  };
}

/** A whole HTTP/1.1 error response, for sockets no Fastify reply owns (`shape` as `sendError` picks it). */
export function rawErrorResponse(error: ApiError, requestId: string, shape: ErrorShape = 'json'): string {
  const body = shape === 'text' ? errorText(error) : JSON.stringify(error.toBody(requestId));
  return rawHttpResponse(error.status, `${shape === 'text' ? 'text/plain' : 'application/json'}; charset=utf-8`, body, requestId, error.headers);
}

/** A whole HTTP/1.1 response that closes the connection (a refused WebSocket upgrade, in any dialect's shape). */
export function rawHttpResponse(status: number, contentType: string, body: string, requestId: string, headers: Record<string, string> = {}): string {
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** The registry error for a request Node's HTTP parser refused. */
export function clientErrorOf(code: string | undefined): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout');
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError('headers_too_large', { limit: maxHeaderSize });
  const detail = code && /^[A-Z_]{1,40}$/.test(code) ? ` (${code})` : '';
  return new ApiError('invalid_request', { reason: `the request is not valid HTTP/1.1${detail}` });
}

/**
 * Fastify's `clientErrorHandler` option: a request Node could not parse
 * (malformed, headers too large, too slow) never becomes a Fastify request,
 * so it gets a fresh id here and the envelope is written to the socket.
 */
export function clientErrorHandler(logger: FastifyBaseLogger) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    // A reset connection has nobody left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = newRequestId();
    const error = clientErrorOf(err.code);
    logger.info({ request_id: requestId, code: error.code, parser: err.code }, 'request rejected');
    if (socket.writable) socket.write(rawErrorResponse(error, requestId));
    socket.destroy();
  };
}
