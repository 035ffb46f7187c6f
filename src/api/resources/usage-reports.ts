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

type Query = { Querystring: Record<string, unknown> };

export function registerUsageReports(app: FastifyInstance, gate: RequestGate, reports: UsageReports): void {
  app.get<Query>('/usage/summary', async (request) => {
    const caller = await authenticateRequest(gate, request);
    requireScope(caller, 'usage:read');
    if (!caller.orgId) throw new ApiError('missing_api_key');
    return reports.summary(request.query, caller.orgId);
  });
}

/** `/admin/usage/summary` and `/admin/usage/export`, on the admin plugin's scope. */
export function registerAdminUsageReports(scope: FastifyInstance, reports: UsageReports): void {
  scope.get<Query>('/usage/summary', async (request) => reports.summary(request.query));
  scope.get<Query>('/usage/export', async (request, reply) => {
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
