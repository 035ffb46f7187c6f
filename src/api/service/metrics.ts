/**
 * @module api/metrics
 * Where `/metrics` is served, and who may read it. On the main port it needs
 * the admin token as `Authorization: Bearer` (constant-time compare) unless
 * `metrics.public`; an API key never reads it. With `metrics.port` set it is
 * served only on that port, by a plain HTTP listener of its own without
 * authentication (for a scraper on a private network), and the main port
 * has no `/metrics`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { checkAdminToken, type AdminDeclaration } from '../route-auth.js';
import { ApiError } from '../../errors/api-error.js';
import { newRequestId } from '../../http/request-id.js';
import { errorResponses, textContent } from '../../http/route-schema.js';
import type { Metrics } from '../../metrics/metrics.js';

export const METRICS_PATH = '/metrics';

/** Throws unless the request may read metrics on the main port. */
export function checkMetricsAccess(authorization: string | undefined, adminToken: string | null): void {
  checkAdminToken(authorization, adminToken, 'metrics_protected');
}

/** `GET /metrics` on the main port. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, access: { public: boolean; adminToken: string | null }): void {
  // The admin token unless `metrics.public`, checked by the one admin-token hook (`route-auth.ts`).
  const config: AdminDeclaration = access.public ? { auth: 'none' } : { auth: 'admin', withoutAdminToken: 'metrics_protected' };
  const schema = {
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: 'The Prometheus text format. Needs the admin token unless `metrics.public`; an API key never reads it.',
    response: { 200: { description: 'The scrape.', content: textContent('text/plain') }, ...errorResponses('native', [401, 403]) },
  };
  app.get(METRICS_PATH, { config, schema }, async (_request, reply) => {
    const body = await metrics.render();
    return reply.header('cache-control', 'no-store').type(metrics.contentType).send(body);
  });
}

function sendError(response: ServerResponse, error: ApiError, requestId: string): void {
  const body = JSON.stringify(error.toBody(requestId));
  response.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...error.headers });
  response.end(body);
}

/** A listener of its own for `/metrics` (`metrics.port`), without authentication. */
export class MetricsServer {
  private readonly server: Server;

  constructor(private readonly metrics: Metrics) {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const path = (request.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) return sendError(response, new ApiError('not_found', { method: request.method, path }), requestId);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return sendError(response, new ApiError('method_not_allowed', { method: request.method, path, allowed: 'GET' }, { allow: 'GET, HEAD' }), requestId);
    }
    try {
      const body = await this.metrics.render();
      response.writeHead(200, { 'content-type': this.metrics.contentType, 'cache-control': 'no-store', 'x-request-id': requestId });
      response.end(request.method === 'HEAD' ? undefined : body);
    } catch {
      sendError(response, new ApiError('generation_failed'), requestId);
    }
  }

  /** Listens; resolves with the URL of `/metrics`. */
  listen(host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address() as AddressInfo;
        const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        resolve(`http://${shown}:${address.port}${METRICS_PATH}`);
      });
    });
  }

  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
