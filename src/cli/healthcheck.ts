/**
 * @module cli/healthcheck
 * `voicegate healthcheck`: asks the server this configuration describes for
 * `/readyz` on the loopback interface and exits 0 when it is ready, 1 when
 * not (starting, draining, not answering). The image's `HEALTHCHECK` runs
 * it, so the image needs no curl. A self-signed or private certificate is
 * accepted: the check talks to its own process, not across a network.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from '../config/schema.js';

export const HEALTHCHECK_USAGE = `voicegate healthcheck [--config path.json]
    Exits 0 when the server on this host's port answers /readyz with 200, else 1.`;

/** The address to reach a server bound to `host` from the same machine. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

export async function runHealthcheck(config: Config, timeoutMs = 3000): Promise<number> {
  const tls = config.server.tls !== null;
  const request = tls ? httpsRequest : httpRequest;
  const status = await new Promise<number | string>((done) => {
    const req = request(
      { host: loopbackFor(config.server.host), port: config.server.port, path: '/readyz', method: 'GET', timeout: timeoutMs, rejectUnauthorized: false },
      (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => done(err.message));
    req.end();
  });
  if (status === 200) return 0;
  console.error(`voicegate: not ready (${typeof status === 'number' ? `/readyz answered ${status}` : status})`);
  return 1;
}
