/**
 * @module accounts/access-tokens
 * Short-lived access tokens, as in the Cartesia API: made from an API key by
 * `POST /access-token`, handed to a browser or device that must never see the
 * key. A token is stateless and signed — `at_<payload>.<signature>`, the
 * payload base64url JSON `{k: key id, o: org id, g: grants, exp: unix s}`,
 * the signature HMAC-SHA256 of `at_<payload>` under the server's token
 * secret — so any instance holding the same secret verifies it without a
 * store read, and it survives restarts. Whether its parent key is still
 * valid is checked by the gate on each use (cached, as keys are).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'at_';
/** The longest a token may live (Cartesia's limit too). */
export const MAX_EXPIRES_IN_S = 3600;

export interface Grants {
  /** TTS on every transport, and reading models and voices. */
  tts: boolean;
}

export interface TokenClaims {
  keyId: string;
  orgId: string;
  grants: Grants;
  /** Expiry, Unix epoch milliseconds. */
  expiresAt: number;
}

export type Verified = { ok: true; claims: TokenClaims } | { ok: false; reason: 'invalid' | 'expired' };

/** True when a presented credential has the shape of an access token (not an API key). */
export function looksLikeToken(presented: string): boolean {
  return presented.startsWith(TOKEN_PREFIX);
}

export class AccessTokens {
  private readonly secret: Buffer;

  constructor(secret: string | Buffer, private readonly now: () => number = Date.now) {
    this.secret = Buffer.from(secret);
    if (this.secret.length < 32) throw new Error('the access-token secret must be at least 32 bytes');
  }

  issue(claims: { keyId: string; orgId: string; grants: Grants; expiresInS: number }): { token: string; expiresAt: number } {
    // Rounded up to the whole second: a token lives at least the `expires_in` it was asked for.
    const exp = Math.ceil(this.now() / 1000 + claims.expiresInS);
    const payload = Buffer.from(JSON.stringify({ k: claims.keyId, o: claims.orgId, g: { tts: claims.grants.tts }, exp })).toString('base64url');
    const body = TOKEN_PREFIX + payload;
    return { token: `${body}.${this.sign(body)}`, expiresAt: exp * 1000 };
  }

  verify(presented: string): Verified {
    const dot = presented.lastIndexOf('.');
    if (!looksLikeToken(presented) || dot < 0 || presented.length > 1024) return { ok: false, reason: 'invalid' };
    const body = presented.slice(0, dot);
    const expected = Buffer.from(this.sign(body));
    const actual = Buffer.from(presented.slice(dot + 1));
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return { ok: false, reason: 'invalid' };
    let claims: { k?: unknown; o?: unknown; g?: { tts?: unknown }; exp?: unknown };
    try {
      claims = JSON.parse(Buffer.from(body.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (typeof claims.k !== 'string' || typeof claims.o !== 'string' || typeof claims.exp !== 'number' || typeof claims.g !== 'object' || !claims.g) {
      return { ok: false, reason: 'invalid' };
    }
    const expiresAt = claims.exp * 1000;
    if (expiresAt <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, claims: { keyId: claims.k, orgId: claims.o, grants: { tts: claims.g.tts === true }, expiresAt } };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}
