/**
 * @module api/access-token
 * `POST /access-token` `{grants: {tts: true}, expires_in}` → `{token}`, as in
 * the Cartesia API: an API key (never another token) makes a short-lived
 * token for a browser or device, scoped to the key's organisation and billed
 * to it. See `accounts/access-tokens.ts` for what a token is.
 */
import type { FastifyInstance } from 'fastify';
import { MAX_EXPIRES_IN_S, type AccessTokens } from '../../accounts/access-tokens.js';
import { ApiError } from '../../errors/api-error.js';
import type { RequestGate } from '../../synthesis/gate.js';
import { authenticateRequest } from '../../http/credentials.js';
import { requireScope } from '../../accounts/scopes.js';
import { component, errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';

/** A token lives this long when `expires_in` is not given. */
export const DEFAULT_EXPIRES_IN_S = 3600;

const SEND = 'send {"grants": {"tts": true}, "expires_in": <seconds>}';
const EXPIRES = `expires_in must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_S}`;

/** The body, each refusal as it always was: `tts` the only grant (others only as false or null). */
const bodySchema = component(
  'AccessTokenRequest',
  z
    .object(
      {
        grants: z
          .looseObject({}, { error: 'grants is required: {"tts": true}' })
          .superRefine((grants, ctx) => {
            for (const [name, value] of Object.entries(grants)) {
              if (name !== 'tts' && value !== false && value !== null) return void ctx.addIssue({ code: 'custom', message: `grant ${name} is not offered by this server; only tts` });
            }
            if (grants.tts !== true) ctx.addIssue({ code: 'custom', message: 'grants.tts must be true: it is the only grant this server offers' });
          })
          .meta({ properties: { tts: { const: true } }, required: ['tts'] })
          .describe('`tts` must be true; Cartesia’s other grants (`stt`, `agent`) are not offered and may only be sent as false or null.'),
        expires_in: z.int({ error: EXPIRES }).min(1, { error: EXPIRES }).max(MAX_EXPIRES_IN_S, { error: EXPIRES }).nullish().describe(`Seconds the token lives (default ${DEFAULT_EXPIRES_IN_S}).`),
      },
      { error: (issue) => (issue.input === undefined || issue.input === null ? SEND : 'invalid_json') },
    )
    .describe('The body of `POST /access-token`.'),
);

const SCHEMA = {
  tags: ['Account'],
  summary: 'Make a short-lived access token from an API key',
  description: 'For a browser or device that must not hold the key. Only an API key can make one; its requests are billed to the key’s organisation.',
  body: bodySchema,
  response: { 200: { description: 'The token.', content: jsonContent('AccessToken') }, ...errorResponses('native', [400, 401, 403, 415, 429, 503]) },
};

export function registerAccessToken(app: FastifyInstance, gate: RequestGate, tokens: AccessTokens): void {
  app.post('/access-token', { schema: SCHEMA, attachValidation: true, config: { auth: 'key' } }, async (request) => {
    // No `token` use: a token cannot make tokens (nor outlive its own expiry that way).
    const caller = await authenticateRequest(gate, request);
    if (!caller.orgId || !caller.keyId) throw new ApiError('missing_api_key');
    // A token's tts grant (its only one) never exceeds its key: the key needs the tts scope.
    requireScope(caller, 'tts');
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    const expiresInS = (request.body as z.infer<typeof bodySchema>).expires_in ?? DEFAULT_EXPIRES_IN_S;
    return { token: tokens.issue({ keyId: caller.keyId, orgId: caller.orgId, grants: { tts: true }, expiresInS }).token };
  });
}
