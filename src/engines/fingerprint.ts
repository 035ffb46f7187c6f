/**
 * @module engines/fingerprint
 * What engines put in their `fingerprint()` (engines/engine): the version of
 * an npm package they run, and the SHA-256 of the files a local model is
 * made of (a folder: each file under it, by relative path), so a swapped
 * model file changes the audio cache's key after a restart.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

/** `name@version` of an installed package; `name@unknown` when its package.json cannot be read. */
export function packageVersion(name: string): string {
  try {
    const path = createRequire(import.meta.url).resolve(`${name}/package.json`);
    return `${name}@${(JSON.parse(readFileSync(path, 'utf8')) as { version?: string }).version ?? 'unknown'}`;
  } catch {
    return `${name}@unknown`;
  }
}

async function fileDigest(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : []))
    .sort();
}

/** One digest over named paths (files or folders), each file's content hashed in full; missing paths count as absent. */
export async function pathsDigest(paths: Record<string, string | undefined>): Promise<string> {
  const hash = createHash('sha256');
  for (const name of Object.keys(paths).sort()) {
    const path = paths[name];
    if (!path) continue;
    let files: string[];
    try {
      files = statSync(path).isDirectory() ? filesUnder(path) : [path];
    } catch {
      hash.update(`${name}\0absent\n`);
      continue;
    }
    for (const file of files) hash.update(`${name}\0${relative(path, file)}\0${await fileDigest(file)}\n`);
  }
  return hash.digest('hex');
}
