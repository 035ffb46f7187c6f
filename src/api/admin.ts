/**
 * @module api/admin
 * The operator's HTTP API under `/admin`: the organisations, keys, credits,
 * usage, alerts and cache routes, on the admin plugin's scope (`routes.ts`),
 * where every route declares the admin token (`route-auth.ts`). Off unless
 * `accounts.adminToken` is set.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountsAdmin } from '../accounts/admin.js';
import type { PricingConfig } from '../accounts/pricing.js';
import { ledgerView, orgView } from '../accounts/views.js';
import type { AudioCache } from '../cache/audio-cache.js';
import { ApiError } from '../errors/api-error.js';
import { registerAlertRoutes, type AlertRoutes } from './admin-alerts.js';

type Body = Record<string, unknown>;

function body(request: FastifyRequest): Body {
  const value = request.body;
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_json', { reason: '' });
  return value as Body;
}

/** What a purge names: an organisation's entries, a voice's (in one organisation or all), or everything (`all: true`). */
function purgeScope(input: Body): { orgId?: string; voiceId?: string } {
  const { organisation_id: orgId, voice_id: voiceId, all } = input;
  for (const [name, value] of [['organisation_id', orgId], ['voice_id', voiceId]] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw new ApiError('invalid_request', { reason: `${name} must be a non-empty string` });
  }
  if (all !== undefined && typeof all !== 'boolean') throw new ApiError('invalid_request', { reason: 'all must be a boolean' });
  if (orgId === undefined && voiceId === undefined && all !== true) {
    throw new ApiError('invalid_request', { reason: 'name organisation_id, voice_id or both, or send {"all": true} to purge everything' });
  }
  return { ...(orgId !== undefined ? { orgId: orgId as string } : {}), ...(voiceId !== undefined ? { voiceId: voiceId as string } : {}) };
}

/** The organisations, keys, credits, usage, alerts and cache routes, on the admin plugin's scope (`/admin`). */
export function registerAdmin(
  scope: FastifyInstance,
  admin: AccountsAdmin,
  pricing: PricingConfig,
  cache: AudioCache | null = null,
  alerts: AlertRoutes | null = null,
): void {
  type Id = { Params: { id: string } };
  scope.get('/orgs', async () => ({ data: (await admin.listOrgs()).map((o) => orgView(o, pricing)) }));
  scope.post('/orgs', async (request, reply) => {
    const input = body(request);
    const org = await admin.createOrg({ name: input.name, credits: input.credits, limits: input.limits as Body | undefined });
    return reply.code(201).send(orgView(org, pricing));
  });
  scope.get<Id>('/orgs/:id', async (request) => orgView(await admin.getOrg(request.params.id), pricing));
  scope.patch<Id>('/orgs/:id', async (request) => {
    const limits = body(request).limits;
    if (typeof limits !== 'object' || limits === null) throw new ApiError('invalid_request', { reason: 'send {"limits": {...}}' });
    return orgView(await admin.setLimits(request.params.id, limits as Body), pricing);
  });
  scope.get<Id>('/orgs/:id/keys', async (request) => ({ data: await admin.viewKeys(request.params.id) }));
  scope.post<Id>('/orgs/:id/keys', async (request, reply) => {
    const { name, ...policy } = body(request);
    const issued = await admin.issueKey(request.params.id, name, policy);
    return reply.code(201).send({ ...(await admin.viewKey(issued.record)), key: issued.key });
  });
  scope.patch<Id>('/keys/:id', async (request) => admin.viewKey(await admin.updateKey(request.params.id, body(request))));
  scope.delete<Id>('/keys/:id', async (request) => admin.viewKey(await admin.revokeKey(request.params.id)));
  // The audio cache of this server (memory and disk tiers) and the shared tier; the other servers purge their own tiers.
  scope.post('/cache/purge', async (request) => {
    const what = purgeScope(body(request));
    try {
      return { purged: cache ? await cache.purge(what) : 0 };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      request.log.warn({ err }, 'audio cache purge could not reach the shared tier');
      throw new ApiError('cache_unavailable', {}, { 'retry-after': '1' });
    } finally {
      // Then every other server purges its own memory and disk tiers when it hears of it (the change bus).
      admin.announce({ purge: what });
    }
  });
  scope.post<Id>('/orgs/:id/credits', async (request, reply) => {
    const input = body(request);
    const { org, entry } = await admin.addCredits(request.params.id, input.amount, input.reason);
    return reply.code(201).send({ entry: ledgerView(entry, pricing), org: orgView(org, pricing) });
  });
  scope.get<Id & { Querystring: Record<string, string> }>('/orgs/:id/usage', async (request) => {
    const page = await admin.usage(request.params.id, request.query);
    return { data: page.data.map((e) => ledgerView(e, pricing)), has_more: page.hasMore };
  });
  if (alerts) registerAlertRoutes(scope, alerts);
}
