/**
 * @module api/concurrency
 * `GET /concurrency` in Cartesia's shape, for the caller's organisation:
 * `{tts_requests: {active, limit}, tts_websockets: {active, limit}}`.
 * `tts_requests.limit` is the organisation's `max_concurrent` (null: no
 * limit); while a limit is set, `active` is the count it is enforced
 * against (the limit counters, shared by every server that shares them),
 * otherwise this server's syntheses in flight. WebSocket connections are not
 * limited per organisation: their `limit` is null and `active` counts this
 * server's open connections.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { Services } from '../../services.js';
import { storeUnavailable } from '../../store/errors.js';
import type { Org } from '../../store/store.js';
import type { Activity } from '../../concurrency/activity.js';
import { authenticateRequest } from '../../http/credentials.js';
import { errorResponses, jsonContent } from '../../http/route-schema.js';

export interface ConcurrencyView {
  tts_requests: { active: number; limit: number | null };
  tts_websockets: { active: number; limit: number | null };
  tts_jobs: { active: number; limit: number | null };
}

async function orgOf(services: Services, orgId: string): Promise<Org | null> {
  try {
    return await services.store.orgs.get(orgId);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    services.logger.error({ err, dependency: 'store' }, 'could not read an organisation');
    throw storeUnavailable(err);
  }
}

async function leasesOf(services: Services, orgId: string): Promise<number | null> {
  if (!services.accounts) return null;
  try {
    return await services.accounts.limits.active(orgId);
  } catch (err) {
    services.logger.error({ err, dependency: 'limits' }, 'could not read the concurrency counters');
    throw new ApiError('limits_unavailable', {}, { 'retry-after': '1' });
  }
}

export function registerConcurrency(app: FastifyInstance, services: Services, activity: Activity): void {
  const schema = {
    tags: ['Account'],
    summary: 'Concurrency of the caller’s organisation',
    response: { 200: { description: 'Active syntheses and WebSocket connections, with their limits.', content: jsonContent('Concurrency') }, ...errorResponses('native', [401, 403, 429, 503]) },
  };
  app.get('/concurrency', { schema, config: { auth: 'key' } }, async (request): Promise<ConcurrencyView> => {
    const caller = await authenticateRequest(services.gate, request);
    if (!caller.orgId) throw new ApiError('missing_api_key');
    const org = await orgOf(services, caller.orgId);
    const limit = org?.limits.maxConcurrent ?? null;
    const leases = limit === null ? null : await leasesOf(services, caller.orgId);
    return {
      tts_requests: { active: leases ?? activity.syntheses(caller.orgId), limit },
      tts_websockets: { active: activity.websockets(caller.orgId), limit: null },
      tts_jobs: { active: activity.background(caller.orgId), limit: services.config.jobs.enabled ? services.config.jobs.maxRunningPerOrg : 0 },
    };
  });
}
