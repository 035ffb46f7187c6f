/**
 * @module config/kept-secret
 * A secret the operator did not configure, generated once and kept in a file
 * of the data directory (mode 0600), so it survives restarts and is shared by
 * every process on that directory: the access-token secret, the webhook
 * signing secret.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `configured` when set, else the secret kept in `<dataDir>/<name>`, made by `make` on first use. */
export function keptSecret(configured: string | null, dataDir: string, name: string, make: () => string): string {
  if (configured) return configured;
  const path = join(dataDir, name);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = make();
  try {
    // `wx`: when two processes start at once, the first file wins and both read it.
    writeFileSync(path, secret + '\n', { flag: 'wx', mode: 0o600 });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(path, 'utf8').trim();
  }
}
