/**
 * @module webhooks/signature
 * Webhook signatures per the Standard Webhooks spec (standardwebhooks.com):
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature:
 * v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, so receivers can use
 * any Standard Webhooks library. The key of a `whsec_<base64>` secret is its
 * decoded rest; any other secret string is used as its UTF-8 bytes.
 *
 * When no secret is configured one is generated once and kept in
 * `<dataDir>/webhook-secret` (mode 0600), so signatures survive restarts and
 * every process on that data directory signs alike (as the token secret is kept).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { keptSecret } from '../config/kept-secret.js';
import { join } from 'node:path';

export const SECRET_PREFIX = 'whsec_';

// A type, not an interface, so it passes as a plain header record.
export type WebhookSignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** The HMAC key a secret stands for. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX) ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

function hmac(secret: string, id: string, timestampSeconds: number | string, body: string): Buffer {
  return createHmac('sha256', webhookKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest();
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): WebhookSignatureHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${hmac(secret, id, timestampSeconds, body).toString('base64')}`,
  };
}

/** Request headers as Node gives them (lower-case names) or as a plain record. */
export type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when one of the space-separated `v1,` signatures matches and the
 * timestamp is within `toleranceSeconds` of `nowSeconds` either way (a replay
 * guard). Compares in constant time.
 */
export function verifyWebhook(
  secret: string,
  headers: HeaderBag,
  body: string,
  toleranceSeconds = 300,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = hmac(secret, id, timestamp, body);
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(entry.slice(comma + 1), 'base64');
    // No early return: every entry costs the same whether or not an earlier one matched.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

export function webhookSecretPath(dataDir: string): string {
  return join(dataDir, 'webhook-secret');
}

/** The configured secret, else the one kept in `<dataDir>/webhook-secret`, made on first use. */
export function resolveWebhookSecret(configured: string | null, dataDir: string): string {
  return keptSecret(configured, dataDir, 'webhook-secret', () => SECRET_PREFIX + randomBytes(32).toString('base64'));
}
