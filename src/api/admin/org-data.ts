/**
 * @module api/admin-org-data
 * The operator's view of one organisation's own things, with the admin
 * token: its cloned voices, its pronunciation dictionaries and its
 * long-form jobs, listed in the same shapes its keys see, and the two
 * actions an operator takes on them (delete a voice, cancel or remove a
 * job). The admin token speaks for no organisation, so it synthesises
 * nothing here: a key does that, and is billed for it.
 */
import type { FastifyInstance } from 'fastify';
import type { AccountsAdmin } from '../../accounts/admin.js';
import type { Services } from '../../services.js';
import type { Caller } from '../../synthesis/gate.js';
import { dictToJson } from '../resources/dictionaries.js';
import { jobPageQuery, jobToJson } from '../resources/jobs.js';
import { cursorQuerySchema, pageByCursor } from '../resources/paging.js';
import { errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';
import { ownVoice, voiceToJson } from '../resources/voices.js';

type Org = { Params: { id: string }; Querystring: Record<string, unknown> };

const orgParams = z.object({ id: z.string().describe('The organisation id (at most 256 characters).') });
const itemParams = (what: string) => orgParams.extend({ item: z.string().describe(`The ${what} id (at most 256 characters).`) });
/** An admin route's declaration: its answers, and the admin token's refusals beside `statuses`. */
const declared = (summary: string, response: Record<string, unknown>, statuses: number[], more: Record<string, unknown>) => ({
  schema: { tags: ['Admin'], summary, ...more, response: { ...response, ...errorResponses('native', [...statuses, 401, 403]) } },
});
const page = (description: string, schema: string) => ({ 200: { description, content: jsonContent(schema) } });
type OrgThing = { Params: { id: string; item: string } };

export function registerAdminOrgData(scope: FastifyInstance, admin: AccountsAdmin, services: Services): void {
  /** The organisation as its own keys' caller: an unknown one is 404 before anything is read. */
  const as = async (orgId: string): Promise<Caller> => ({ orgId: (await admin.getOrg(orgId)).id, keyId: null });

  scope.get<Org>('/orgs/:id/voices', declared('An organisation’s cloned voices', page('A page of its own voices, newest first (no built-ins).', 'VoiceList'), [400, 404], { params: orgParams, querystring: cursorQuerySchema }), async (request) => {
    const { orgId } = await as(request.params.id);
    const own = (await services.voices.list(orgId)).filter((v) => v.ownerOrgId === orgId);
    const page = pageByCursor(own, request.query);
    return { data: page.data.map((v) => voiceToJson(v, orgId)), has_more: page.has_more };
  });
  scope.delete<OrgThing>('/orgs/:id/voices/:item', declared('Delete an organisation’s cloned voice', { 204: { description: 'Deleted.' } }, [400, 404], { params: itemParams('voice') }), async (request, reply) => {
    const { orgId } = await as(request.params.id);
    await ownVoice(services, request.params.item, orgId);
    await services.store.voices.delete(request.params.item);
    return reply.code(204).send();
  });

  scope.get<Org>('/orgs/:id/pronunciation-dicts', declared('An organisation’s pronunciation dictionaries', page('A page, newest first, with their entries.', 'PronunciationDictList'), [400, 404], { params: orgParams, querystring: cursorQuerySchema }), async (request) => {
    const { orgId } = await as(request.params.id);
    const page = pageByCursor(await services.store.dicts.list(orgId!), request.query);
    return { data: page.data.map(dictToJson), has_more: page.has_more };
  });

  const jobs = services.jobs;
  if (!jobs) return;
  scope.get<Org>('/orgs/:id/jobs', declared('An organisation’s long-form jobs', page('A page, newest first.', 'JobList'), [400, 404], { params: orgParams, querystring: cursorQuerySchema.pick({ limit: true, starting_after: true }) }), async (request) => {
    const page = await jobs.list(await as(request.params.id), jobPageQuery(request.query));
    return { data: page.data.map((job) => jobToJson(job, services)), has_more: page.hasMore };
  });
  scope.delete<OrgThing>(
    '/orgs/:id/jobs/:item',
    declared(
      'Cancel an organisation’s queued or running job, or remove a finished one',
      { 200: { description: 'Cancelled: the job; or, when its charge had already begun, the job as it is (running, to end succeeded).', content: jsonContent('Job') }, 204: { description: 'Removed with its audio.' } },
      [404],
      { params: itemParams('job') },
    ),
    async (request, reply) => {
    const left = await jobs.cancelOrRemove(request.params.item, await as(request.params.id));
    return left ? jobToJson(left, services) : reply.code(204).send();
  });
}
