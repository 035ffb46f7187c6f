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
import type { GatewayCard } from '../../cluster/roster.js';
import type { Services } from '../../services.js';
import { errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';

/** What this gateway says of itself: in `GET /admin/engines`, and on its card for the others (`cluster/roster.ts`). */
export function gatewayState(services: Services, isClosing: () => boolean) {
  return {
    instance: services.instanceId,
    version: services.version,
    status: isClosing() ? 'closing' : !services.engines.allReady() ? 'starting' : services.engines.failures().length ? 'degraded' : 'ready',
    // An engine with a circuit breaker shows its state (engines/breaker); `imported`: a model imported while the
    // server runs (models/import), which DELETE /admin/models/{id} removes.
    engines: services.engines.list().map((engine) => {
      const breaker = services.engines.breaker(engine.id);
      return {
        ...engine.info(),
        ...(breaker ? { breaker: breaker.info() } : {}),
        ...(services.engines.isAdded(engine.id) ? { imported: true } : {}),
      };
    }),
  };
}

const ENGINES = {
  tags: ['Admin'],
  summary: 'This gateway’s engines, and every gateway alive',
  response: {
    200: {
      description:
        'This gateway: its instance id, version and status, each engine’s `info()` (`ready`, and where the engine has them `workers`, `busy`, `queued`, an upstream pool’s members), its limit counters; `gateways`: with the limit counters in Redis, the ids of every gateway whose heartbeat has not lapsed (random per process), and `gateway_id` this one’s among them (both null without Redis; null with `gateways_error` while Redis does not answer). `peers`: every other gateway alive, as its card last said (written every 5 s, lapsing after 15 s): its engines, audio-cache figures, status and version; `card: null` for one whose card is not there yet. `instance` is the id this gateway’s diagnostics events carry.',
      content: jsonContent(
              z.object({
                instance: z.string(),
                version: z.string(),
                status: z.enum(['ready', 'degraded', 'starting', 'closing']),
                engines: z.array(z.object({ id: z.string(), type: z.string(), sampleRate: z.number(), ready: z.boolean() }).catchall(z.unknown())),
                limits: z.object({ state: z.string(), gateways: z.number().nullable() }).nullable(),
                gateway_id: z.string().nullable(),
                gateways: z.array(z.string()).nullable(),
                peers: z
                  .array(
                    z.union([
                      z.object({
                        gateway_id: z.string(),
                        instance: z.string(),
                        version: z.string(),
                        status: z.string(),
                        engines: z.array(z.object({ id: z.string(), type: z.string() }).catchall(z.unknown())),
                        cache: z.object({ hits: z.number(), misses: z.number() }).catchall(z.unknown()).nullable(),
                        seen_at: z.string(),
                      }),
                      z.object({ gateway_id: z.string(), card: z.null() }),
                    ]),
                  )
                  .nullable(),
                gateways_error: z.string().optional(),
              }),
      ),
    },
    ...errorResponses('native', [401, 403]),
  },
};

export function registerAdminEngines(scope: FastifyInstance, services: Services, isClosing: () => boolean): void {
  scope.get('/engines', { schema: ENGINES }, async (request) => {
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
