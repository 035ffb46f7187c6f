/**
 * @module api/playground
 * `GET /playground`: the browser playground, a static page (see
 * `playground/page.ts`). It holds no secret; the key a person pastes stays
 * in the page.
 */
import type { FastifyInstance } from 'fastify';
import { PLAYGROUND_HTML } from '../../playground/page.js';
import { ANY_ROUTE_ERRORS, errorResponses, textContent } from '../../http/route-schema.js';

const SCHEMA = {
  tags: ['Operations'],
  summary: 'The browser playground',
  description: 'One static page: it makes an access token from a key pasted into it and speaks over the WebSocket.',
  response: { 200: { description: 'HTML.', content: textContent('text/html') }, ...errorResponses('native', ANY_ROUTE_ERRORS) },
};

export function registerPlayground(app: FastifyInstance): void {
  app.get('/playground', { schema: SCHEMA }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; media-src 'self' blob:")
      .send(PLAYGROUND_HTML),
  );
}
