/**
 * @module accounts/api-keys
 * API key format and verification. A key is `sk_<id>_<secret>`: the id finds
 * the record without touching the secret, and the secret (256 random bits)
 * is stored only as its SHA-256 and compared in constant time. A fast hash is
 * enough because the secret is random, not a password.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PATTERN = /^sk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  id: string;
  secret: string;
  secretHash: string;
  /** The full key, shown once to the user. */
  key: string;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function generateKey(): GeneratedKey {
  const idPart = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id: `key_${idPart}`, secret, secretHash: hashSecret(secret), key: `sk_${idPart}_${secret}` };
}

/** Splits a presented key into record id and secret; null when it cannot be one of ours. */
export function parseKey(presented: string): { id: string; secret: string } | null {
  const match = KEY_PATTERN.exec(presented);
  return match ? { id: `key_${match[1]}`, secret: match[2] } : null;
}

const DUMMY_HASH = hashSecret('dummy');

/** Constant-time check of a secret against a stored hash (a missing record still costs one compare). */
export function secretMatches(secret: string, storedHash: string | null): boolean {
  const expected = Buffer.from(storedHash ?? DUMMY_HASH, 'hex');
  const actual = Buffer.from(hashSecret(secret), 'hex');
  return timingSafeEqual(expected, actual) && storedHash !== null;
}

/** Constant-time comparison of two tokens of any length (e.g. the admin token). */
export function tokensEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}
