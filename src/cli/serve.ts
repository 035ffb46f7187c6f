/**
 * @module cli/serve
 * `voicegate serve` (what `npm start` runs): starts the server, prints the
 * bootstrap API key once on first start, and shuts down gracefully on
 * SIGINT/SIGTERM, finishing requests in flight.
 */
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { createLogger } from '../log/logger.js';

function banner(address: string, orgId: string, credits: number, key: string): string {
  return [
    '',
    '  Voicegate created organization ' + orgId + ' with ' + credits.toLocaleString('en-US') + ' credits and this API key.',
    '  It is shown only this once — store it now:',
    '',
    '    ' + key,
    '',
    '  Try it:',
    '',
    `    curl -sS ${address}/tts/bytes -H "Authorization: Bearer ${key}" \\`,
    `      -d '{"model_id":"gepard-1.0","transcript":"Hello from Voicegate!","voice":{"mode":"id","id":"sarah"},"output_format":{"container":"wav","encoding":"pcm_s16le","sample_rate":22050}}' \\`,
    '      --output hello.wav',
    '',
  ].join('\n');
}

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.log.level);
  const app = createApp(config, logger);
  const address = await app.listen();
  if (app.bootstrap) {
    // Straight to stdout, never through the logger: log pipelines keep what they receive.
    process.stdout.write(banner(address, app.bootstrap.org.id, app.bootstrap.org.balance, app.bootstrap.key) + '\n');
  }
  logger.info(
    { address, dataDir: config.dataDir, accounts: config.accounts.enabled, models: app.services.models.list().map((m) => `${m.id} → ${m.engine}`) },
    'voicegate ready',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing requests in flight');
    app.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
