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
import { component, errorResponses, jsonContent } from '../http/route-schema.js';
import { z } from 'zod';
import { registerAlertRoutes, type AlertRoutes } from './admin-alerts.js';

type Body = Record<string, unknown>;

function body(request: FastifyRequest): Body {
  const value = request.body;
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_json', { reason: '' });
  return value as Body;
}

const NOTHING_NAMED = 'name organisation_id, voice_id or both, or send {"all": true} to purge everything';

/** What a purge names: an organisation's entries, a voice's (in one organisation or all), or everything (`all: true`). */
const purgeBody = component(
  'CachePurge',
  z
    .object(
      {
        organisation_id: z.string({ error: 'organisation_id must be a non-empty string' }).min(1, { error: 'organisation_id must be a non-empty string' }).optional().describe('That organisation’s entries (its own; shared entries belong to none).'),
        voice_id: z.string({ error: 'voice_id must be a non-empty string' }).min(1, { error: 'voice_id must be a non-empty string' }).optional().describe('That voice’s entries (with `organisation_id`: only that organisation’s).'),
        all: z.boolean({ error: 'all must be a boolean' }).optional().describe('`true` with neither id: every entry.'),
      },
      { error: NOTHING_NAMED },
    )
    .refine((input) => input.organisation_id !== undefined || input.voice_id !== undefined || input.all === true, { error: NOTHING_NAMED })
    // At least one of them: an empty body (`{}`) is refused, so nothing is purged by mistake.
    .meta({ anyOf: [{ required: ['organisation_id'] }, { required: ['voice_id'] }, { required: ['all'], properties: { all: { const: true } } }] })
    .describe('What to remove from this server’s audio cache: `organisation_id`, `voice_id`, or `all: true`; an empty body (`{}`) is refused with 400 `invalid_request`.'),
);

const PURGE_ROUTE = {
  tags: ['Admin'],
  summary: 'Purge the audio cache',
  description: 'This server’s memory and disk tiers and the shared tier; every other server purges its own tiers when it hears of it.',
  body: purgeBody,
  response: {
    200: { description: 'How many entries this server removed.', content: jsonContent(component('CachePurged', z.object({ purged: z.int().min(0).describe('Entries removed from memory and disk.') }))) },
    ...errorResponses('native', [400, 401, 403, 503]),
  },
};

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
  scope.post('/cache/purge', { schema: PURGE_ROUTE }, async (request) => {
    const input = request.body as z.infer<typeof purgeBody>;
    const what = { ...(input.organisation_id !== undefined ? { orgId: input.organisation_id } : {}), ...(input.voice_id !== undefined ? { voiceId: input.voice_id } : {}) };
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
