/**
 * @module console/assets
 * The operator console's files (`console/assets/`: one HTML page, one
 * script, one style sheet, written by hand, no bundler), copied beside the
 * compiled code by `npm run build` (`scripts/build-assets.mjs`). Nothing is
 * read at start: a file is read the first time it is asked for and kept in
 * memory with its ETag, so the server's start and its synthesis path pay
 * nothing for the console.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

export interface ConsoleAsset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The files the console serves, by the name in their URL, and their content types. */
export const CONSOLE_ASSETS: Readonly<Record<string, string>> = {
  'console.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

const loaded = new Map<string, Promise<ConsoleAsset>>();

/** One asset, read once; null for a name that is not one of `CONSOLE_ASSETS`. */
export function consoleAsset(name: string): Promise<ConsoleAsset> | null {
  const type = Object.hasOwn(CONSOLE_ASSETS, name) ? CONSOLE_ASSETS[name] : undefined;
  if (!type) return null;
  let asset = loaded.get(name);
  if (!asset) {
    asset = readFile(new URL(`./assets/${name}`, import.meta.url)).then((body) => ({
      body,
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    }));
    asset.catch(() => loaded.delete(name));
    loaded.set(name, asset);
  }
  return asset;
}
