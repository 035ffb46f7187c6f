/**
 * @module http/server
 * Builds the Fastify instance: request ids (on every log line, response and
 * error body), the error envelope, body caps, and the routes of each API
 * dialect. Transports only adapt; synthesis lives in `synthesis/`.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { registerAdmin } from '../api/admin.js';
import { registerDictionaries } from '../api/dictionaries.js';
import { registerTtsBytes } from '../api/cartesia/bytes.js';
import { registerTtsSse } from '../api/cartesia/sse.js';
import { registerWebSocket } from '../api/cartesia/websocket.js';
import { registerOpenAISpeech } from '../api/openai/speech.js';
import { registerHealth } from '../api/health.js';
import { registerModels } from '../api/models.js';
import { registerUsage } from '../api/usage.js';
import { registerVoices } from '../api/voices.js';
import type { Services } from '../services.js';
import { installErrorHandlers } from './errors.js';
import { acceptRawBodies } from './json-body.js';
import { resolveTls } from './tls.js';
import { newRequestId } from './request-id.js';

export function buildHttpServer(services: Services, isClosing: () => boolean): FastifyInstance {
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
    return503OnClosing: true,
    // HTTPS on this same (HTTP/1.1) server, so WebSocket upgrades on app.server are wss://.
    ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}),
  });
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  installErrorHandlers(app, server.bodyLimitBytes);
  registerHealth(app, services, isClosing);
  registerModels(app, services);
  registerVoices(app, services);
  registerDictionaries(app, services);
  if (services.accounts) {
    const { admin, pricing } = services.accounts;
    registerUsage(app, services.gate, admin, pricing);
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
