/**
 * @module api/admin-engines
 * `GET /admin/engines` (the admin token): this gateway's engines as they
 * stand (each engine's `info()`: ready, workers, busy, queued, an upstream
 * pool's members), its instance id, version and limit counters, and — when
 * the limit counters are shared in Redis — the instance ids of every gateway
 * whose heartbeat there has not lapsed (`gateways`, ids random per process)
 * and this one's among them (`gateway_id`), with each other gateway's card
 * (`peers`: its engines, audio cache figures, status and version as it last
 * wrote them, every 5 s). The console's Engines and Cache pages read it.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayCard } from '../cluster/roster.js';
import type { Services } from '../services.js';

/** What this gateway says of itself: in `GET /admin/engines`, and on its card for the others (`cluster/roster.ts`). */
export function gatewayState(services: Services, isClosing: () => boolean) {
  return {
    instance: services.instanceId,
    version: services.version,
    status: isClosing() ? 'closing' : !services.engines.allReady() ? 'starting' : services.engines.failures().length ? 'degraded' : 'ready',
    engines: services.engines.list().map((engine) => engine.info()),
  };
}

export function registerAdminEngines(scope: FastifyInstance, services: Services, isClosing: () => boolean): void {
  scope.get('/engines', async (request) => {
    const limits = services.accounts?.limits;
    const status = limits?.status?.();
    let gateways: string[] | null = null;
    let gatewayId: string | null = null;
    let peers: (GatewayCard | { gateway_id: string; card: null })[] | null = null;
    let gatewaysError: string | undefined;
    if (limits?.liveGateways) {
      try {
        const live = await limits.liveGateways();
        gateways = live.alive;
        gatewayId = live.self;
        const others = live.alive.filter((id) => id !== live.self);
        const cards = (await services.roster?.cards(others)) ?? others.map(() => null);
        peers = others.map((id, i) => cards[i] ?? { gateway_id: id, card: null });
      } catch (err) {
        request.log.warn({ err }, 'the live gateways could not be read from Redis');
        gatewaysError = 'Redis did not answer; the count last seen is in limits.gateways';
      }
    }
    return {
      ...gatewayState(services, isClosing),
      limits: status ? { state: status.state, gateways: status.gateways ?? null } : null,
      gateway_id: gatewayId,
      gateways,
      peers,
      ...(gatewaysError ? { gateways_error: gatewaysError } : {}),
    };
  });
}
