/**
 * @module api/admin-alerts
 * Usage alerts under the admin API (registered inside its scope, so behind
 * the admin token): `POST /admin/orgs/{id}/alerts`, `GET
 * /admin/orgs/{id}/alerts` (each with its latest events) and `DELETE
 * /admin/alerts/{id}`.
 */
import type { FastifyInstance } from 'fastify';
import { alertView, createAlert } from '../../accounts/alerts.js';
import { ApiError } from '../../errors/api-error.js';
import type { Store } from '../../store/store.js';
import { errorResponses, jsonContent, schemaRef } from '../../http/route-schema.js';
import { z } from 'zod';

/** Events shown with each alert. */
const EVENTS_SHOWN = 20;

export interface AlertRoutes {
  store: Store;
  /** The webhook URL guard job webhooks use (scheme, private addresses). */
  checkUrl: (url: string) => Promise<unknown>;
}

const orgParams = z.object({ id: z.string().describe('The organisation id (at most 256 characters).') });
const alertParams = z.object({ id: z.string().describe('The usage alert id (at most 256 characters).') });
const answer = (description: string, schema: string) => ({ description, content: jsonContent(schema) });
const errors = (statuses: number[]) => errorResponses('native', [...statuses, 401, 403]);
// The body is checked by `accounts/alerts.ts` (its URL by the webhook guard, its key against the organisation): documented by shape here.
const CREATE = { tags: ['Admin'], summary: 'Make a usage alert', params: orgParams, body: z.unknown().meta(schemaRef('UsageAlertCreate')), response: { 201: answer('The alert.', 'UsageAlert'), ...errors([400, 404]) } };
const LIST = { tags: ['Admin'], summary: 'An organisation’s usage alerts', params: orgParams, response: { 200: answer('Its alerts, each with its latest events.', 'UsageAlertList'), ...errors([404]) } };
const DELETE = { tags: ['Admin'], summary: 'Delete a usage alert', params: alertParams, response: { 200: answer('The deleted alert.', 'UsageAlert'), ...errors([404]) } };

export function registerAlertRoutes(scope: FastifyInstance, { store, checkUrl }: AlertRoutes): void {
  type Id = { Params: { id: string } };
  scope.post<Id>('/orgs/:id/alerts', { schema: CREATE }, async (request, reply) => {
    const input = request.body;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ApiError('invalid_json', { reason: '' });
    const alert = await createAlert(store, request.params.id, input as Record<string, unknown>, checkUrl);
    return reply.code(201).send(alertView(alert));
  });
  scope.get<Id>('/orgs/:id/alerts', { schema: LIST }, async (request) => {
    if (!(await store.orgs.get(request.params.id))) throw new ApiError('org_not_found', { id: request.params.id });
    const alerts = await store.alerts.list(request.params.id);
    return { data: await Promise.all(alerts.map(async (alert) => alertView(alert, await store.alerts.events(alert.id, EVENTS_SHOWN)))) };
  });
  scope.delete<Id>('/alerts/:id', { schema: DELETE }, async (request) => {
    const alert = await store.alerts.get(request.params.id);
    if (!alert || !(await store.alerts.delete(alert.id))) throw new ApiError('alert_not_found', { id: request.params.id });
    return alertView(alert);
  });
}
