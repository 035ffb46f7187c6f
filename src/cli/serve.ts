/**
 * @module cli/serve
 * `voicegate serve` (what `npm start` runs): installs the models `pull`
 * names that are not installed yet, starts the server, prints the bootstrap
 * API key once on first start (and, with self-signed TLS, how to trust the
 * development CA), and drains on SIGINT/SIGTERM: `/readyz` answers 503 at
 * once, new requests are still served for `server.drainDelayMs` (so a load
 * balancer stops routing here first), each answer with `Connection: close`,
 * then the listener closes and requests in flight finish, up to
 * `server.shutdownGraceMs`. A request counts until its client has read the
 * last byte (`http/connections.ts`); the process exits as soon as none is
 * left. A second signal exits at once.
 */
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { selfSignedPaths } from '../http/tls.js';
import { createLogger } from '../log/logger.js';
import { pullOnStart } from './models/on-start.js';

function banner(address: string, orgId: string, credits: number, key: string, caPath: string | null): string {
  return [
    '',
    '  Voicegate created organization ' + orgId + ' with ' + credits.toLocaleString('en-US') + ' credits and this API key.',
    '  It is shown only this once — store it now:',
    '',
    '    ' + key,
    '',
    '  Try it:',
    '',
    `    curl -sS ${caPath ? `--cacert ${caPath} ` : ''}${address}/tts/bytes -H "Authorization: Bearer ${key}" \\`,
    `      -d '{"model_id":"gepard-1.0","transcript":"Hello from Voicegate!","voice":{"mode":"id","id":"sarah"},"output_format":{"container":"wav","encoding":"pcm_s16le","sample_rate":22050}}' \\`,
    '      --output hello.wav',
    '',
  ].join('\n');
}

/** How to trust the development CA; printed on every self-signed start, since clients need it each time they are set up. */
function tlsBanner(address: string, caPath: string): string {
  return [
    '',
    '  Voicegate serves HTTPS and WSS with a self-signed development certificate.',
    '  Clients must trust its CA, ' + caPath + ':',
    '',
    `    Node (fetch, ws, Cartesia SDK):  NODE_EXTRA_CA_CERTS=${caPath} node your-app.js`,
    `    curl:                            curl --cacert ${caPath} ${address}/healthz`,
    '',
  ].join('\n');
}

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.log.level);
  await pullOnStart(config, logger);
  const app = await createApp(config, logger);
  const address = await app.listen();
  const caPath = config.server.tls && 'selfSigned' in config.server.tls ? selfSignedPaths(config.dataDir).ca : null;
  if (caPath) process.stdout.write(tlsBanner(address, caPath) + '\n');
  if (app.bootstrap) {
    // Straight to stdout, never through the logger: log pipelines keep what they receive.
    process.stdout.write(banner(address, app.bootstrap.org.id, app.bootstrap.org.balance, app.bootstrap.key, caPath) + '\n');
  }
  logger.info(
    { address, dataDir: config.dataDir, tlsCa: caPath ?? undefined, accounts: config.accounts.enabled, models: app.services.models.list().map((m) => `${m.id} → ${m.engine}`) },
    'voicegate ready',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    const { drainDelayMs, shutdownGraceMs } = config.server;
    logger.info({ signal, drainDelayMs, shutdownGraceMs }, 'shutting down: not ready from now on, finishing requests in flight');
    app.drain();
    // The drain's progress, once a second until the process exits.
    setInterval(() => logger.info(app.progress(), 'draining'), 1000).unref();
    setTimeout(() => {
      app.close().then(
        () => {
          logger.info(app.progress(), 'shut down');
          process.exit(0);
        },
        (err) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    }, drainDelayMs);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
