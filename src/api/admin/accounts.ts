/**
 * @module api/admin
 * The operator's HTTP API under `/admin`: the organisations, keys, credits,
 * usage, alerts and cache routes, on the admin plugin's scope (`routes.ts`),
 * where every route declares the admin token (`route-auth.ts`). Off unless
 * `accounts.adminToken` is set.
 */
import type { FastifyInstance } from 'fastify';
import { creditsInputSchema, keyInputSchema, limitFields, orgCreateInputSchema, type AccountsAdmin } from '../../accounts/admin.js';
import type { PricingConfig } from '../../accounts/pricing.js';
import { ledgerView, orgView } from '../../accounts/views.js';
import type { AudioCache } from '../../cache/audio-cache.js';
import { ApiError } from '../../errors/api-error.js';
import { component, errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';
import { registerAlertRoutes, type AlertRoutes } from './alerts.js';

type Body = Record<string, unknown>;


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

const orgId = z.object({ id: z.string().describe('The organisation id (at most 256 characters).') });
const keyId = z.object({ id: z.string().describe('The API key id (at most 256 characters).') });
const keyBody = component('ApiKeyInput', keyInputSchema.describe('A key’s name and policy; every field optional (absent: no limit when issuing, unchanged when patching); null clears a limit.'));
const orgCreate = component('OrganizationCreate', orgCreateInputSchema);
const NO_LIMITS = 'send {"limits": {...}}';
// `limits` absent, or anything but an object, is refused as it always was.
const orgPatch = component('OrganizationPatch', z.object({ limits: z.looseObject(limitFields, { error: NO_LIMITS }) }, { error: NO_LIMITS }).describe('Only the limits sent change.'));
const creditsBody = component('CreditsAdd', creditsInputSchema);
/** A page of a ledger (`limit`, `starting_after`), also `GET /usage`'s. */
export const ledgerQuery = z.object({
  limit: z
    .string()
    .refine((value) => /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 1000, { error: 'limit must be an integer from 1 to 1000' })
    .optional()
    .meta({ type: 'integer', minimum: 1, maximum: 1000 })
    .describe('1–1000 (default 50).'),
  starting_after: z.string({ error: 'starting_after must be a ledger entry id' }).regex(/^\d+$/, { error: 'starting_after must be a ledger entry id' }).optional().describe('A ledger entry id.'),
});

const ok = (description: string, schema: string) => ({ description, content: jsonContent(schema) });
const route = (summary: string, response: Record<string, unknown>, statuses: number[], more: Record<string, unknown> = {}) => ({
  schema: { tags: ['Admin'], summary, ...more, response: { ...response, ...errorResponses('native', [...statuses, 401, 403]) } },
});

/** The organisations, keys, credits, usage, alerts and cache routes, on the admin plugin's scope (`/admin`). */
export function registerAdmin(
  scope: FastifyInstance,
  admin: AccountsAdmin,
  pricing: PricingConfig,
  cache: AudioCache | null = null,
  alerts: AlertRoutes | null = null,
): void {
  type Id = { Params: { id: string } };
  scope.get('/orgs', route('List organisations', { 200: ok('Every organisation.', 'OrganizationList') }, []), async () => ({ data: (await admin.listOrgs()).map((o) => orgView(o, pricing)) }));
  scope.post('/orgs', route('Create an organisation', { 201: ok('Created.', 'Organization') }, [400], { body: orgCreate }), async (request, reply) => {
    const input = request.body as z.infer<typeof orgCreate>;
    const org = await admin.createOrg({ name: input.name, credits: input.credits, limits: input.limits });
    return reply.code(201).send(orgView(org, pricing));
  });
  scope.get<Id>('/orgs/:id', route('Get an organisation', { 200: ok('The organisation.', 'Organization') }, [404], { params: orgId }), async (request) => orgView(await admin.getOrg(request.params.id), pricing));
  scope.patch<Id>('/orgs/:id', route('Set an organisation’s limits', { 200: ok('The organisation.', 'Organization') }, [400, 404], { params: orgId, body: orgPatch }), async (request) => {
    const { limits } = request.body as z.infer<typeof orgPatch>;
    return orgView(await admin.setLimits(request.params.id, limits), pricing);
  });
  scope.get<Id>('/orgs/:id/keys', route('List an organisation’s keys', { 200: ok('Its keys (never their secrets).', 'ApiKeyList') }, [404], { params: orgId }), async (request) => ({ data: await admin.viewKeys(request.params.id) }));
  // No body: a key without a name or limits.
  scope.post<Id>('/orgs/:id/keys', route('Issue a key', { 201: ok('The key, with its secret shown once.', 'IssuedApiKey') }, [400, 404], { params: orgId, body: keyBody.optional() }), async (request, reply) => {
    const { name, ...policy } = (request.body ?? {}) as z.infer<typeof keyBody>;
    const issued = await admin.issueKey(request.params.id, name, policy);
    return reply.code(201).send({ ...(await admin.viewKey(issued.record)), key: issued.key });
  });
  scope.patch<Id>('/keys/:id', route('Change a key’s name or policy', { 200: ok('The key.', 'ApiKey') }, [400, 404], { params: keyId, body: keyBody.optional() }), async (request) =>
    admin.viewKey(await admin.updateKey(request.params.id, (request.body ?? {}) as Body)),
  );
  scope.delete<Id>('/keys/:id', route('Revoke a key', { 200: ok('The revoked key.', 'ApiKey') }, [404], { params: keyId }), async (request) => admin.viewKey(await admin.revokeKey(request.params.id)));
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
  scope.post<Id>('/orgs/:id/credits', route('Add (or take away) credits', { 201: ok('The ledger entry and the organisation.', 'CreditsAdded') }, [400, 404], { params: orgId, body: creditsBody }), async (request, reply) => {
    const input = request.body as z.infer<typeof creditsBody>;
    const { org, entry } = await admin.addCredits(request.params.id, input.amount, input.reason);
    return reply.code(201).send({ entry: ledgerView(entry, pricing), org: orgView(org, pricing) });
  });
  scope.get<Id & { Querystring: Record<string, string> }>('/orgs/:id/usage', route('An organisation’s ledger', { 200: ok('A page of its ledger, newest first.', 'LedgerPage') }, [400, 404], { params: orgId, querystring: ledgerQuery }), async (request) => {
    const page = await admin.usage(request.params.id, request.query);
    return { data: page.data.map((e) => ledgerView(e, pricing)), has_more: page.hasMore };
  });
  if (alerts) registerAlertRoutes(scope, alerts);
}
