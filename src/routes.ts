/**
 * @module routes
 * Assembly of the HTTP API: every route of every dialect, registered on the
 * instance `http/server.ts` builds. Called by `app.ts` right after the
 * instance is built, before anything else adds a route, so the record of
 * registered routes the OpenAPI tests read is complete. `http/` offers the
 * instance, the envelope, TLS and the synthesis route adapter and knows no
 * route; this module knows them all.
 */
import type { FastifyInstance } from 'fastify';
import { UsageReports } from './accounts/usage-reports.js';
import { registerAccessToken } from './api/resources/access-token.js';
import { registerAdmin } from './api/admin/accounts.js';
import { registerAdminEngines } from './api/admin/engines.js';
import { registerAdminModels } from './api/admin/models.js';
import { registerAdminOrgData } from './api/admin/org-data.js';
import { registerAdminVoices } from './api/admin/voices.js';
import { registerConsole } from './api/service/console.js';
import { registerConcurrency } from './api/resources/concurrency.js';
import { registerDictionaries } from './api/resources/dictionaries.js';
import { registerTtsBytes } from './api/dialects/cartesia/bytes.js';
import { registerTtsNormalize } from './api/dialects/cartesia/normalize.js';
import { registerTtsCaptioned } from './api/dialects/cartesia/captioned.js';
import { registerTtsSse } from './api/dialects/cartesia/sse.js';
import { registerTtsDialogue } from './api/dialects/cartesia/dialogue.js';
import { cartesiaWebSocket } from './api/dialects/cartesia/websocket.js';
import { elevenLabsWebSocketRoutes, registerElevenLabs } from './api/dialects/elevenlabs/index.js';
import { deepgramWebSocketRoute, registerDeepgram } from './api/dialects/deepgram/index.js';
import { registerOpenAISpeech } from './api/dialects/openai/speech.js';
import { registerHealth } from './api/service/health.js';
import { registerJobs } from './api/resources/jobs.js';
import { registerMetricsRoute } from './api/service/metrics.js';
import { registerModels } from './api/resources/models.js';
import { registerPlayground } from './api/service/playground.js';
import { registerUsage } from './api/resources/usage.js';
import { registerAdminUsageReports, registerUsageReports } from './api/resources/usage-reports.js';
import { declareAdminRoutes, installRouteAuth } from './api/route-auth.js';
import { registerVoices } from './api/resources/voices.js';
import { rawErrorResponse } from './http/errors.js';
import { acceptJsonBodies } from './http/json-body.js';
import { WebSocketRouter } from './http/websocket-router.js';
import { registerOpenApi } from './openapi/route.js';
import { trackRoutes } from './openapi/routes.js';
import { collectRoutes } from './openapi/generate.js';
import type { Services } from './services.js';

/**
 * `isClosing`: new requests are refused (503 `not_ready`); `isDraining`: the server is leaving but
 * still serves, and only `/readyz` says so, for a load balancer to stop routing here.
 */
export function registerRoutes(app: FastifyInstance, services: Services, isClosing: () => boolean, isDraining: () => boolean = isClosing): WebSocketRouter {
  trackRoutes(app);
  collectRoutes(app);
  installRouteAuth(app, services.config.accounts.adminToken);
  registerHealth(app, services, () => isClosing() || isDraining());
  registerModels(app, services);
  registerPlayground(app);
  registerConsole(app);
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
    jobs: services.jobs !== null,
  });
  if (services.accounts) {
    const { admin, pricing, tokens } = services.accounts;
    registerUsage(app, services.gate, admin, pricing);
    registerAccessToken(app, services.gate, tokens);
    const reports = new UsageReports(services.accounts.store, pricing);
    registerUsageReports(app, services.gate, reports);
    // The operator's API: one plugin, each of its routes declaring the admin token.
    app.register(
      async (scope) => {
        declareAdminRoutes(scope);
        registerAdmin(scope, admin, pricing, services.cache?.store ?? null, { store: services.accounts!.store, checkUrl: services.accounts!.checkWebhookUrl });
        registerAdminUsageReports(scope, reports);
        registerAdminEngines(scope, services, () => isClosing() || isDraining());
        registerAdminOrgData(scope, admin, services);
        registerAdminVoices(scope, services);
      },
      { prefix: '/admin' },
    );
  }
  // Without accounts too: a homelab server imports its own voices with the admin token alone.
  if (services.modelImports) registerAdminModels(app, services, services.modelImports);
  registerJobs(app, services);
  const websockets = registerWebSockets(app, services, isClosing);
  registerSynthesisRoutes(app, services);
  return websockets;
}

/** Every dialect's WebSocket path, on the server's one upgrade router. */
export function registerWebSockets(app: FastifyInstance, services: Services, isClosing: () => boolean): WebSocketRouter {
  const router = new WebSocketRouter(
    app,
    {
      options: services.config.server.websocket,
      gate: services.gate,
      instance: services.instanceId,
      logger: services.logger,
      shutdownGraceMs: services.config.server.shutdownGraceMs,
      trustProxy: services.config.server.trustProxy,
      notFound: (error, requestId) => rawErrorResponse(error, requestId),
    },
    isClosing,
  );
  router.route(cartesiaWebSocket(services));
  for (const route of elevenLabsWebSocketRoutes(services)) router.route(route);
  router.route(deepgramWebSocketRoute(services));
  return router;
}

/** The HTTP synthesis endpoints (`/tts/bytes`, `/tts/sse`, `/v1/audio/speech`, `/v1/text-to-speech/…`), each dialect in a scope of its own. */
export function registerSynthesisRoutes(app: FastifyInstance, services: Services): void {
  const { server } = services.config;
  app.register(async (tts) => {
    acceptJsonBodies(tts, server.bodyLimitBytes);
    registerTtsBytes(tts, services);
    registerTtsCaptioned(tts, services);
    registerTtsSse(tts, services);
    registerTtsDialogue(tts, services);
    registerTtsNormalize(tts, services);
  });
  app.register(async (openai) => {
    acceptJsonBodies(openai, server.bodyLimitBytes);
    registerOpenAISpeech(openai, services);
  });
  registerElevenLabs(app, services);
  addCredentialConstraint(app);
  registerDeepgram(app, services, { constraints: { credential: 'token' } });
}

/**
 * A route constraint on the scheme of the request's credential: `Authorization: Token …` is
 * `token`, which Deepgram's clients send. A path two dialects answer (`GET /v1/models`: ElevenLabs'
 * for `xi-api-key` or `Bearer`, Deepgram's for `Token`) is registered by each, the one constrained,
 * so the credential decides and neither dialect knows the other.
 */
export function addCredentialConstraint(app: FastifyInstance): void {
  if (app.hasConstraintStrategy('credential')) return;
  app.addConstraintStrategy({
    name: 'credential',
    mustMatchWhenDerived: false,
    storage() {
      const handlers = new Map<string, unknown>();
      return { get: (scheme: string) => handlers.get(scheme) ?? null, set: (scheme: string, store: unknown) => void handlers.set(scheme, store) };
    },
    deriveConstraint(request: { headers: Record<string, string | string[] | undefined> }) {
      const authorization = request.headers.authorization;
      return typeof authorization === 'string' && /^token\s/i.test(authorization) ? 'token' : undefined;
    },
  } as never);
}
