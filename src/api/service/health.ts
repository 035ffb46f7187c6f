/**
 * @module api/health
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: every
 * engine a model is bound to is warm and the server is not shutting down;
 * an engine that could not start is listed with its reason as `degraded`
 * rather than making the whole server unready, since other models serve;
 * limit counters that lost Redis make it `degraded` too, never unready:
 * `limits` says how they stand; `store` says whether the store answers, as
 * the accounts see it: `degraded` while known keys are admitted on held
 * credit, `unavailable` past `accounts.outageMaxSeconds`), plus `GET /`, which the Cartesia SDK uses
 * as an API status call.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { sendError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { z } from 'zod';
import { ANY_ROUTE_ERRORS, errorResponses, jsonContent } from '../../http/route-schema.js';

const ERRORS = errorResponses('native', ANY_ROUTE_ERRORS);

export function registerHealth(app: FastifyInstance, services: Services, isClosing: () => boolean): void {
  const status = { tags: ['Operations'], summary: 'API status', response: { 200: { description: 'Up.', content: jsonContent(z.object({ ok: z.literal(true), version: z.string() })) }, ...ERRORS } };
  app.get('/', { schema: status }, async () => ({ ok: true, version: services.version }));
  const live = { tags: ['Operations'], summary: 'Liveness', response: { 200: { description: 'The process answers.', content: jsonContent(z.object({ status: z.literal('ok') })) }, ...ERRORS } };
  app.get('/healthz', { schema: live }, async () => ({ status: 'ok' }));
  const ready = {
    tags: ['Operations'],
    summary: 'Readiness',
    description: 'Every bound engine is warm and the server is not shutting down.',
    response: { 200: { description: 'Ready.', content: jsonContent('Ready') }, ...ERRORS },
  };
  app.get('/readyz', { schema: ready }, async (request, reply) => {
    const engines = services.engines.list().map((e) => e.info());
    if (isClosing() || !services.engines.allReady()) {
      return sendError(reply, request, new ApiError('not_ready', {}, { 'retry-after': '1' }));
    }
    // A Wyoming listener that is configured but not accepting leaves Home Assistant without speech.
    const wyoming = services.wyoming?.status();
    if (wyoming && !wyoming.listening) return sendError(reply, request, new ApiError('not_ready', {}, { 'retry-after': '1' }));
    const failed = services.engines.failures();
    const limits = services.accounts?.limits.status?.().state;
    const degraded = failed.length > 0 || limits === 'degraded' || limits === 'unavailable';
    // A store that does not answer leaves the server ready: it admits known keys on held credit (`store: degraded`).
    const store = services.accounts?.outage.state;
    return { status: degraded ? 'degraded' : 'ready', engines, ...(failed.length ? { failed } : {}), ...(limits ? { limits } : {}), ...(store ? { store } : {}), ...(wyoming ? { wyoming: { port: wyoming.port, connections: wyoming.connections } } : {}) };
  });
}
