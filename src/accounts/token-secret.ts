/**
 * @module accounts/token-secret
 * The secret that signs access tokens: `accounts.tokenSecret`
 * (`VOICEGATE_TOKEN_SECRET`) when set — every instance behind one load
 * balancer must share it — otherwise 32 random bytes generated once and kept
 * in `<dataDir>/token-secret` (mode 0600), so tokens survive restarts and are
 * shared by every process on that data directory.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { keptSecret } from '../config/kept-secret.js';

export function tokenSecretPath(dataDir: string): string {
  return join(dataDir, 'token-secret');
}

export function resolveTokenSecret(configured: string | null, dataDir: string): string {
  return keptSecret(configured, dataDir, 'token-secret', () => randomBytes(32).toString('base64url'));
}
