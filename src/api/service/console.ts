/**
 * @module api/console
 * `GET /console`: the operator console, a static page whose script and
 * style are separate files under `/console/assets/` (see `console/assets.ts`),
 * so its Content-Security-Policy allows no inline script and no `eval`. It
 * holds no secret: the token a person signs in with stays in the page and is
 * sent as `Authorization` to the same API as every client's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleAsset } from '../../console/assets.js';
import { ANY_ROUTE_ERRORS, errorResponses, textContent } from '../../http/route-schema.js';
import { z } from 'zod';

const PAGE = {
  tags: ['Operations'],
  summary: 'The operator console',
  description: 'One static page; its script and style are under /console/assets/. It holds no secret: a token signed in with stays in the page.',
  response: { 200: { description: 'HTML.', content: textContent('text/html') }, 304: { description: 'Not modified (`If-None-Match`).' }, ...errorResponses('native', ANY_ROUTE_ERRORS) },
};

const ASSET = {
  tags: ['Operations'],
  summary: 'A file of the operator console (console.js, console.css)',
  params: z.object({ name: z.string().describe('`console.js` or `console.css`.') }),
  response: {
    200: { description: 'The script or style sheet.', content: textContent('text/javascript', 'text/css') },
    304: { description: 'Not modified (`If-None-Match`).' },
    404: { description: 'No such file.', content: textContent('text/plain') },
    ...errorResponses('native', ANY_ROUTE_ERRORS),
  },
};

/** The console's policy: its own script and style only, requests to this server, audio from blobs it made. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

async function send(name: string, request: FastifyRequest, reply: FastifyReply, cacheControl: string) {
  const pending = consoleAsset(name);
  // Not the router's `not_found`: the route exists, the file does not.
  if (!pending) return reply.code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('no such file in the console\n');
  const asset = await pending;
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cacheControl)
    .header('etag', asset.etag)
    .type(asset.type);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}

export function registerConsole(app: FastifyInstance): void {
  // The page is checked again on every load (an upgraded server serves its new script at once); the assets are kept an hour.
  app.get('/console', { schema: PAGE }, async (request, reply) => send('console.html', request, reply, 'no-cache'));
  app.get<{ Params: { name: string } }>('/console/assets/:name', { schema: ASSET }, async (request, reply) =>
    send(request.params.name === 'console.html' ? '' : request.params.name, request, reply, 'public, max-age=3600'),
  );
}
