/**
 * @module accounts/credentials
 * Where a client may put its API key: `Authorization: Bearer`, `X-API-Key`,
 * or — for WebSocket upgrades, where browsers and the Cartesia SDK's ESM
 * build cannot set headers — the `api_key` / `access_token` query parameter.
 */
import type { IncomingHttpHeaders } from 'node:http';

export function presentedKey(headers: IncomingHttpHeaders, url: string, allowQuery: boolean): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  if (allowQuery) {
    const query = url.indexOf('?');
    if (query >= 0) {
      const params = new URLSearchParams(url.slice(query + 1));
      const fromQuery = params.get('api_key') ?? params.get('access_token');
      if (fromQuery) return fromQuery;
    }
  }
  return null;
}
