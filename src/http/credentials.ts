/**
 * @module http/credentials
 * Where a client may put its API key or access token: `Authorization:
 * Bearer`, `X-API-Key`, or — for WebSocket upgrades, where browsers and the
 * Cartesia SDK's ESM build cannot set headers — the `api_key` /
 * `access_token` query parameter. HTTP reads them here and hands the gate
 * the credential alone, so the gate knows no transport.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthenticateOptions, Caller, RequestGate } from '../synthesis/gate.js';

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

/** What credentials are read from: an HTTP request or a WebSocket upgrade. */
export interface CredentialSource {
  headers: IncomingHttpHeaders;
  url: string;
  /** The client's address (Fastify's `request.ip`, which follows `server.trustProxy`), for keys limited to some networks. */
  ip?: string;
}

/** The caller of an HTTP request: its credential read from the headers (and the query, where allowed), checked by the gate. */
export function authenticateRequest(gate: RequestGate, source: CredentialSource, options: AuthenticateOptions & { allowQuery?: boolean } = {}): Promise<Caller> {
  const { allowQuery = false, ...rest } = options;
  return gate.authenticate(presentedKey(source.headers, source.url, allowQuery), { address: source.ip ?? null, ...rest });
}
