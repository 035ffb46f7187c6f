/**
 * @module api/console
 * `GET /console`: the operator console, a static page whose script and
 * style are separate files under `/console/assets/` (see `console/assets.ts`),
 * so its Content-Security-Policy allows no inline script and no `eval`. It
 * holds no secret: the token a person signs in with stays in the page and is
 * sent as `Authorization` to the same API as every client's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleAsset } from '../console/assets.js';

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
  app.get('/console', async (request, reply) => send('console.html', request, reply, 'no-cache'));
  app.get<{ Params: { name: string } }>('/console/assets/:name', async (request, reply) =>
    send(request.params.name === 'console.html' ? '' : request.params.name, request, reply, 'public, max-age=3600'),
  );
}
