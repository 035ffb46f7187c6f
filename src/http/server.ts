/**
 * @module http/server
 * Builds the Fastify instance: request ids (on every log line, response and
 * error body), the error envelope for every refusal (router and HTTP parser
 * included), body caps and parsers, refusal while shutting down, and TLS.
 * It registers no route: `routes.ts`, beside `app.ts`, registers the routes
 * of each API dialect on it. Transports only adapt; synthesis lives in
 * `synthesis/`.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import { requestedVersion, versionProblem } from './api-version.js';
import { installRouteSchemas } from './route-schema.js';
import { MAX_PATH_SEGMENT, clientErrorHandler, frameworkErrorHandler, installErrorHandlers, sendError } from './errors.js';
import { trustFunction } from './client-address.js';
import { acceptEmptyBodies } from './json-body.js';
import { resolveTls } from './tls.js';
import { newRequestId } from './request-id.js';

/** What the instance is built from: the server's config (port settings, body cap, TLS) and its logger. */
export interface HttpServerOptions {
  config: Config;
  logger: Logger;
}

export function buildHttpServer(options: HttpServerOptions, isClosing: () => boolean, isDraining: () => boolean = isClosing): FastifyInstance {
  // pino's Logger is wider than Fastify's base logger type; the instance is the same.
  const { server } = options.config;
  const tls = resolveTls(options.config);
  if (tls?.caCreated) options.logger.info({ caPath: tls.caPath }, 'created a new development CA; clients must trust it');
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: server.bodyLimitBytes,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Always the server's own id: it keys charges. A client's x-request-id is logged and stored beside it.
    genReqId: () => newRequestId(),
    // Ids up to this length reach their route (and its own 404); longer is `url_too_long`.
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    // Router and HTTP-parser refusals get the registry envelope too.
    frameworkErrors: frameworkErrorHandler(server.bodyLimitBytes),
    clientErrorHandler: clientErrorHandler(options.logger as FastifyBaseLogger),
    // Shutting down is answered below as `not_ready`, not with Fastify's own 503 body.
    return503OnClosing: false,
    // The client's address (`request.ip`, and so a key's allowed networks) from X-Forwarded-For only
    // behind trusted proxies; the one rule WebSocket upgrades follow too (client-address.ts).
    trustProxy: server.trustProxy === false ? false : trustFunction(server.trustProxy),
    // HTTPS on this same (HTTP/1.1) server, so WebSocket upgrades on app.server are wss://.
    ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}),
  });
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // A leaving server tells keep-alive clients so with every answer: the connection closes once the
    // answer is sent, and the client's next request opens a new one (to a gateway that is staying).
    if (isDraining()) reply.header('connection', 'close');
    if (isClosing()) {
      // Answering from the hook without `done()` ends the request here.
      sendError(reply.header('connection', 'close'), request, new ApiError('not_ready', {}, { 'retry-after': '1' }));
      return;
    }
    const version = versionProblem(requestedVersion(request.headers));
    if (version) return void sendError(reply, request, version);
    done();
  });
  installErrorHandlers(app, server.bodyLimitBytes);
  installRouteSchemas(app);
  acceptEmptyBodies(app);
  return app;
}
