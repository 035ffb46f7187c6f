/**
 * @module cli/cache
 * `voicegate cache purge`: asks a running server to remove audio-cache
 * entries (`POST /admin/cache/purge` with the admin token), since what a
 * server keeps in memory only it can drop. Each server purges its own
 * memory and disk, and the shared tier in Redis when there is one.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.js';
import { UsageError } from './accounts.js';

export const CACHE_USAGE = `voicegate cache purge (--org <id> [--voice <id>] | --voice <id> | --all) [--url <server>]
    Removes audio-cache entries of an organisation, of a voice, or all, from the server at --url
    (default: this config's host and port) and from the shared tier in Redis, through the server's
    admin API (VOICEGATE_ADMIN_TOKEN). Other servers' memory and disk are theirs to purge.`;

/** The server to ask: `--url`, else this config's address as reached from the same machine. */
export function serverUrl(config: Config, given: string | undefined): string {
  if (given) return given.replace(/\/+$/, '');
  const host = config.server.host === '0.0.0.0' || config.server.host === '' ? '127.0.0.1' : config.server.host;
  const scheme = config.server.tls ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

export async function runCacheCommand(config: Config, argv: string[], write: (line: string) => void = console.log): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string' }, org: { type: 'string' }, voice: { type: 'string' }, all: { type: 'boolean' }, url: { type: 'string' } },
  });
  if (positionals[1] !== 'purge' || positionals.length !== 2) throw new UsageError(`unknown cache command\n\n${CACHE_USAGE}`);
  if (!values.all && values.org === undefined && values.voice === undefined) throw new UsageError(`name --org, --voice or --all\n\n${CACHE_USAGE}`);
  if (values.all && (values.org !== undefined || values.voice !== undefined)) throw new UsageError(`--all purges everything: leave out --org and --voice\n\n${CACHE_USAGE}`);
  const token = config.accounts.adminToken;
  if (!token) throw new UsageError('purging a server’s cache needs its admin token (VOICEGATE_ADMIN_TOKEN)');
  const body = values.all ? { all: true } : { ...(values.org !== undefined ? { organisation_id: values.org } : {}), ...(values.voice !== undefined ? { voice_id: values.voice } : {}) };
  const url = `${serverUrl(config, values.url)}/admin/cache/purge`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new UsageError(`could not reach the server at ${url}: ${(err as Error).message}`);
  }
  const answer = (await res.json().catch(() => ({}))) as { purged?: number; message?: string };
  if (!res.ok) throw new UsageError(`the server answered ${res.status}: ${answer.message ?? ''}`);
  write(`purged ${answer.purged ?? 0} entries`);
}
