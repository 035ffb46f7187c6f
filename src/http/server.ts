/**
 * @module http/server
 * Builds the Fastify instance: request ids (on every log line, response and
 * error body), the error envelope, body caps, and the routes of each API
 * dialect. Transports only adapt; synthesis lives in `synthesis/`.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { registerAdmin } from '../api/admin.js';
import { registerTtsBytes } from '../api/cartesia/bytes.js';
import { registerHealth } from '../api/health.js';
import { registerModels } from '../api/models.js';
import { registerUsage } from '../api/usage.js';
import { registerVoices } from '../api/voices.js';
import type { Services } from '../services.js';
import { installErrorHandlers } from './errors.js';
import { acceptRawBodies } from './json-body.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

export function buildHttpServer(services: Services, isClosing: () => boolean): FastifyInstance {
  // pino's Logger is wider than Fastify's base logger type; the instance is the same.
  const { server } = services.config;
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    bodyLimit: server.bodyLimitBytes,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Honour a client's own id when it is safe to log, so traces join up.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : newRequestId();
    },
    return503OnClosing: true,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandlers(app, server.bodyLimitBytes);
  registerHealth(app, services, isClosing);
  registerModels(app, services);
  registerVoices(app, services);
  if (services.accounts) {
    const { admin, pricing } = services.accounts;
    registerUsage(app, services.gate, admin, pricing);
    registerAdmin(app, admin, services.config.accounts.adminToken, pricing);
  }
  app.register(async (tts) => {
    acceptRawBodies(tts, server.bodyLimitBytes);
    registerTtsBytes(tts, services);
  });
  return app;
}
