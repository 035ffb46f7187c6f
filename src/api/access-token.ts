/**
 * @module api/access-token
 * `POST /access-token` `{grants: {tts: true}, expires_in}` → `{token}`, as in
 * the Cartesia API: an API key (never another token) makes a short-lived
 * token for a browser or device, scoped to the key's organisation and billed
 * to it. See `accounts/access-tokens.ts` for what a token is.
 */
import type { FastifyInstance } from 'fastify';
import { MAX_EXPIRES_IN_S, type AccessTokens } from '../accounts/access-tokens.js';
import { ApiError } from '../errors/api-error.js';
import type { RequestGate } from '../synthesis/gate.js';
import { authenticateRequest } from '../http/credentials.js';
import { requireScope } from '../accounts/scopes.js';

/** A token lives this long when `expires_in` is not given. */
export const DEFAULT_EXPIRES_IN_S = 3600;

function parseBody(body: unknown): { expiresInS: number } {
  if (body === undefined || body === null) throw new ApiError('invalid_request', { reason: 'send {"grants": {"tts": true}, "expires_in": <seconds>}' });
  if (typeof body !== 'object' || Array.isArray(body)) throw new ApiError('invalid_json', { reason: '' });
  const { grants, expires_in: expiresIn } = body as Record<string, unknown>;
  if (typeof grants !== 'object' || grants === null || Array.isArray(grants)) {
    throw new ApiError('invalid_request', { reason: 'grants is required: {"tts": true}' });
  }
  const asked = grants as Record<string, unknown>;
  for (const [name, value] of Object.entries(asked)) {
    if (name !== 'tts' && value !== false && value !== null) throw new ApiError('invalid_request', { reason: `grant ${name} is not offered by this server; only tts` });
  }
  if (asked.tts !== true) throw new ApiError('invalid_request', { reason: 'grants.tts must be true: it is the only grant this server offers' });
  if (expiresIn === undefined || expiresIn === null) return { expiresInS: DEFAULT_EXPIRES_IN_S };
  if (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN_S) {
    throw new ApiError('invalid_request', { reason: `expires_in must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_S}` });
  }
  return { expiresInS: expiresIn };
}

export function registerAccessToken(app: FastifyInstance, gate: RequestGate, tokens: AccessTokens): void {
  app.post('/access-token', async (request) => {
    // No `token` use: a token cannot make tokens (nor outlive its own expiry that way).
    const caller = await authenticateRequest(gate, request);
    if (!caller.orgId || !caller.keyId) throw new ApiError('missing_api_key');
    // A token's tts grant (its only one) never exceeds its key: the key needs the tts scope.
    requireScope(caller, 'tts');
    const { expiresInS } = parseBody(request.body);
    return { token: tokens.issue({ keyId: caller.keyId, orgId: caller.orgId, grants: { tts: true }, expiresInS }).token };
  });
}
