/**
 * @module api/admin-engines
 * `GET /admin/engines` (the admin token): this gateway's engines as they
 * stand (each engine's `info()`: ready, workers, busy, queued, an upstream
 * pool's members), its instance id, version and limit counters, and — when
 * the limit counters are shared in Redis — the instance ids of every gateway
 * whose heartbeat there has not lapsed (`gateways`, ids random per process)
 * and this one's among them (`gateway_id`). The console's Engines page reads it.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { requireAdminToken } from './admin.js';

export function registerAdminEngines(app: FastifyInstance, services: Services, isClosing: () => boolean): void {
  app.register(
    async (scope) => {
      scope.addHook('onRequest', requireAdminToken(services.config.accounts.adminToken));
      scope.get('/engines', async (request) => {
        const limits = services.accounts?.limits;
        const status = limits?.status?.();
        let gateways: string[] | null = null;
        let gatewayId: string | null = null;
        let gatewaysError: string | undefined;
        if (limits?.liveGateways) {
          try {
            const live = await limits.liveGateways();
            gateways = live.alive;
            gatewayId = live.self;
          } catch (err) {
            request.log.warn({ err }, 'the live gateways could not be read from Redis');
            gatewaysError = 'Redis did not answer; the count last seen is in limits.gateways';
          }
        }
        return {
          instance: services.instanceId,
          version: services.version,
          status: isClosing() ? 'closing' : !services.engines.allReady() ? 'starting' : services.engines.failures().length ? 'degraded' : 'ready',
          engines: services.engines.list().map((engine) => engine.info()),
          limits: status ? { state: status.state, gateways: status.gateways ?? null } : null,
          gateway_id: gatewayId,
          gateways,
          ...(gatewaysError ? { gateways_error: gatewaysError } : {}),
        };
      });
    },
    { prefix: '/admin' },
  );
}
