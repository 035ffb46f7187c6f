/**
 * @module accounts/token-secret
 * The secret that signs access tokens: `accounts.tokenSecret`
 * (`VOICEGATE_TOKEN_SECRET`) when set — every instance behind one load
 * balancer must share it — otherwise 32 random bytes generated once and kept
 * in `<dataDir>/token-secret` (mode 0600), so tokens survive restarts and are
 * shared by every process on that data directory.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function tokenSecretPath(dataDir: string): string {
  return join(dataDir, 'token-secret');
}

export function resolveTokenSecret(configured: string | null, dataDir: string): string {
  if (configured) return configured;
  const path = tokenSecretPath(dataDir);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    // `wx`: when two processes start at once, the first file wins and both read it.
    writeFileSync(path, secret + '\n', { flag: 'wx', mode: 0o600 });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(path, 'utf8').trim();
  }
}
