/**
 * @module api/usage-reports
 * Usage reports over HTTP: `GET /usage/summary` (an API key: its own
 * organisation only), and under the admin token `GET /admin/usage/summary`
 * (every organisation, or `org`) and `GET /admin/usage/export` (the ledger of
 * a range as CSV or JSON Lines, streamed: pulled from the store page by page
 * as the socket takes it). The rules are `accounts/usage-reports.ts`.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { UsageReports } from '../../accounts/usage-reports.js';
import { EXPORT_CONTENT_TYPES } from '../../accounts/usage-reports.js';
import { ApiError } from '../../errors/api-error.js';
import { requireScope } from '../../accounts/scopes.js';
import { authenticateRequest } from '../../http/credentials.js';
import type { RequestGate } from '../../synthesis/gate.js';
import { errorResponses, jsonContent, textContent } from '../../http/route-schema.js';
import { z } from 'zod';

/**
 * The query of a report, documented by shape and checked by `accounts/usage-reports.ts` (dates with
 * or without a zone, a range, repeated or comma-separated groups: its messages name the value given).
 */
const range = {
  from: z.unknown().optional().meta({ type: 'string' }).describe('ISO 8601 date (midnight UTC) or time with a zone; inclusive. Default: the start of the UTC month `to` falls in.'),
  to: z.unknown().optional().meta({ type: 'string' }).describe('ISO 8601; exclusive. Default: now. A range that ends in the past never changes afterwards.'),
};
const groupBy = z
  .unknown()
  .optional()
  .meta({ type: 'string' })
  .describe('Comma-separated and/or repeated: `day`, `hour`, `model`, `endpoint`, `key`, `org`. None: one row of totals.');
const org = z.unknown().optional().meta({ type: 'string' }).describe('Only this organisation.');
const summaryQuery = z.looseObject({ ...range, group_by: groupBy });
const adminSummaryQuery = z.looseObject({ ...range, group_by: groupBy, org });
const exportQuery = z.looseObject({ ...range, format: z.unknown().optional().meta({ type: 'string', enum: ['csv', 'jsonl'] }).describe('`csv` (default) or `jsonl`.'), org });

const SUMS = { description: 'Sums over `[from, to)`.', content: jsonContent('UsageSummary') };
const SUMMARY = {
  tags: ['Account'],
  summary: 'The organisation’s usage, summed by day, hour, model, endpoint or key',
  querystring: summaryQuery,
  response: { 200: SUMS, ...errorResponses('native', [400, 401, 403, 429, 503]) },
};
const ADMIN_SUMMARY = {
  tags: ['Admin'],
  summary: 'Usage summed over every organisation, or one',
  querystring: adminSummaryQuery,
  response: { 200: SUMS, ...errorResponses('native', [400, 401, 403, 404, 503]) },
};
const EXPORT = {
  tags: ['Admin'],
  summary: 'The ledger of a range, for billing',
  querystring: exportQuery,
  response: {
    200: {
      description:
        'One line per ledger row (charges and credits added; `kind` tells them apart), ordered by time then id, streamed. `id` is stable: ingest idempotently by it. `credits` and `usd` as in the ledger: negative for a charge. CSV has a header line and RFC 4180 quoting.',
      headers: { 'content-disposition': { description: '`attachment; filename="voicegate-usage-<from>-<to>[-<org>].<format>"`', schema: { type: 'string' } } },
      content: textContent('text/csv', 'application/x-ndjson'),
    },
    ...errorResponses('native', [400, 401, 403, 404, 503]),
  },
};

type Query = { Querystring: Record<string, unknown> };

export function registerUsageReports(app: FastifyInstance, gate: RequestGate, reports: UsageReports): void {
  app.get<Query>('/usage/summary', { schema: SUMMARY, config: { auth: 'key' } }, async (request) => {
    const caller = await authenticateRequest(gate, request);
    requireScope(caller, 'usage:read');
    if (!caller.orgId) throw new ApiError('missing_api_key');
    return reports.summary(request.query, caller.orgId);
  });
}

/** `/admin/usage/summary` and `/admin/usage/export`, on the admin plugin's scope. */
export function registerAdminUsageReports(scope: FastifyInstance, reports: UsageReports): void {
  scope.get<Query>('/usage/summary', { schema: ADMIN_SUMMARY }, async (request) => reports.summary(request.query));
  scope.get<Query>('/usage/export', { schema: EXPORT }, async (request, reply) => {
    const { format, filename, chunks } = await reports.export(request.query);
    // The first chunk is read before the answer starts, so a store that cannot answer is an error response, not a cut stream.
    const iterator = chunks[Symbol.asyncIterator]();
    const first = await iterator.next();
    async function* body(): AsyncGenerator<string> {
      if (!first.done) yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    }
    reply.header('content-type', EXPORT_CONTENT_TYPES[format]);
    reply.header('content-disposition', `attachment; filename="${filename}"`);
    reply.header('cache-control', 'no-store');
    return reply.send(Readable.from(body(), { objectMode: false, highWaterMark: 65_536 }));
  });
}
