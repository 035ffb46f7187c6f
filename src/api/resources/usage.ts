/**
 * @module api/usage
 * `GET /usage`: the calling organisation's balance and ledger, newest first,
 * paged with `limit` and `starting_after`. Only ever the caller's own org.
 */
import type { FastifyInstance } from 'fastify';
import type { AccountsAdmin } from '../../accounts/admin.js';
import type { PricingConfig } from '../../accounts/pricing.js';
import { ledgerView, orgView } from '../../accounts/views.js';
import { ApiError } from '../../errors/api-error.js';
import type { RequestGate } from '../../synthesis/gate.js';
import { authenticateRequest } from '../../http/credentials.js';
import { requireScope } from '../../accounts/scopes.js';
import { errorResponses, jsonContent } from '../../http/route-schema.js';
import { ledgerQuery } from '../admin/accounts.js';

const SCHEMA = {
  tags: ['Account'],
  summary: 'The organisation’s balance and ledger',
  querystring: ledgerQuery,
  response: { 200: { description: 'The organisation and a page of its ledger, newest first.', content: jsonContent('Usage') }, ...errorResponses('native', [400, 401, 403, 429, 503]) },
};

export function registerUsage(app: FastifyInstance, gate: RequestGate, admin: AccountsAdmin, pricing: PricingConfig): void {
  app.get<{ Querystring: Record<string, string> }>('/usage', { schema: SCHEMA, attachValidation: true, config: { auth: 'key' } }, async (request) => {
    const caller = await authenticateRequest(gate, request);
    requireScope(caller, 'usage:read');
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    if (!caller.orgId) throw new ApiError('missing_api_key');
    const org = await admin.getOrg(caller.orgId);
    const page = await admin.usage(caller.orgId, request.query);
    return { org: orgView(org, pricing), data: page.data.map((e) => ledgerView(e, pricing)), has_more: page.hasMore };
  });
}
