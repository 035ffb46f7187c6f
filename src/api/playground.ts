/**
 * @module api/playground
 * `GET /playground`: the browser playground, a static page (see
 * `playground/page.ts`). It holds no secret; the key a person pastes stays
 * in the page.
 */
import type { FastifyInstance } from 'fastify';
import { PLAYGROUND_HTML } from '../playground/page.js';

export function registerPlayground(app: FastifyInstance): void {
  app.get('/playground', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; media-src 'self' blob:")
      .send(PLAYGROUND_HTML),
  );
}
