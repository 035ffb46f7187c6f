/**
 * @module http/server
 * Builds the Fastify instance: request ids (on every log line, response and
 * error body), the error envelope for every refusal (router and HTTP parser
 * included), body caps and parsers, refusal while shutting down, and the
 * routes of each API dialect. Transports only adapt; synthesis lives in
 * `synthesis/`.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { registerAccessToken } from '../api/access-token.js';
import { registerAdmin } from '../api/admin.js';
import { registerDictionaries } from '../api/dictionaries.js';
import { registerTtsBytes } from '../api/cartesia/bytes.js';
import { registerTtsSse } from '../api/cartesia/sse.js';
import { registerWebSocket } from '../api/cartesia/websocket.js';
import { registerOpenAISpeech } from '../api/openai/speech.js';
import { registerHealth } from '../api/health.js';
import { registerModels } from '../api/models.js';
import { registerPlayground } from '../api/playground.js';
import { registerUsage } from '../api/usage.js';
import { registerVoices } from '../api/voices.js';
import { registerConcurrency } from '../concurrency/route.js';
import { registerMetricsRoute } from '../metrics/route.js';
import { registerOpenApi } from '../openapi/route.js';
import { trackRoutes } from '../openapi/routes.js';
import type { Services } from '../services.js';
import { ApiError } from '../errors/api-error.js';
import { requestedVersion, versionProblem } from './api-version.js';
import { MAX_PATH_SEGMENT, clientErrorHandler, frameworkErrorHandler, installErrorHandlers, sendError } from './errors.js';
import { acceptEmptyBodies, acceptRawBodies } from './json-body.js';
import { resolveTls } from './tls.js';
import { newRequestId } from './request-id.js';

/**
 * `isClosing`: new requests are refused (503 `not_ready`); `isDraining`: the server is leaving but
 * still serves, and only `/readyz` says so, for a load balancer to stop routing here.
 */
export function buildHttpServer(services: Services, isClosing: () => boolean, isDraining: () => boolean = isClosing): FastifyInstance {
  // pino's Logger is wider than Fastify's base logger type; the instance is the same.
  const { server } = services.config;
  const tls = resolveTls(services.config);
  if (tls?.caCreated) services.logger.info({ caPath: tls.caPath }, 'created a new development CA; clients must trust it');
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    bodyLimit: server.bodyLimitBytes,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Always the server's own id: it keys charges. A client's x-request-id is logged and stored beside it.
    genReqId: () => newRequestId(),
    // Ids up to this length reach their route (and its own 404); longer is `url_too_long`.
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    // Router and HTTP-parser refusals get the registry envelope too.
    frameworkErrors: frameworkErrorHandler(server.bodyLimitBytes),
    clientErrorHandler: clientErrorHandler(services.logger as FastifyBaseLogger),
    // Shutting down is answered below as `not_ready`, not with Fastify's own 503 body.
    return503OnClosing: false,
    // HTTPS on this same (HTTP/1.1) server, so WebSocket upgrades on app.server are wss://.
    ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}),
  });
  trackRoutes(app);
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
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
  acceptEmptyBodies(app);
  registerHealth(app, services, () => isClosing() || isDraining());
  registerModels(app, services);
  registerPlayground(app);
  registerVoices(app, services);
  registerDictionaries(app, services);
  registerConcurrency(app, services, services.activity);
  const metricsHere = services.metrics !== null && services.config.metrics.port === null;
  if (services.metrics && metricsHere) {
    registerMetricsRoute(app, services.metrics, { public: services.config.metrics.public, adminToken: services.config.accounts.adminToken });
  }
  registerOpenApi(app, {
    version: services.version,
    accounts: services.accounts !== null,
    metricsOnMainPort: metricsHere,
    costHeaderAliasPrefix: services.config.accounts.costHeaderAliasPrefix,
  });
  if (services.accounts) {
    const { admin, pricing, tokens } = services.accounts;
    registerUsage(app, services.gate, admin, pricing);
    registerAccessToken(app, services.gate, tokens);
    registerAdmin(app, admin, services.config.accounts.adminToken, pricing);
  }
  registerWebSocket(app, services, isClosing);
  app.register(async (tts) => {
    acceptRawBodies(tts, server.bodyLimitBytes);
    registerTtsBytes(tts, services);
    registerTtsSse(tts, services);
  });
  app.register(async (openai) => {
    acceptRawBodies(openai, server.bodyLimitBytes);
    registerOpenAISpeech(openai, services);
  });
  return app;
}
