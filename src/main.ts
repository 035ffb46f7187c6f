/**
 * @module main
 * `npm start` / `voicegate serve`: loads configuration, starts the server and
 * shuts it down gracefully on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config/load.js';
import { createLogger } from './log/logger.js';

const USAGE = `Usage: voicegate [serve] [--config path.json]

Starts the Voicegate text-to-speech server.
  --config <file>   JSON configuration file (see README); VOICEGATE_* variables override it
  -h, --help        show this help`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const command = positionals[0] ?? 'serve';
  if (command !== 'serve') throw new ConfigError(`unknown command ${command}\n\n${USAGE}`);

  const config = loadConfig({ file: values.config });
  const logger = createLogger(config.log.level);
  const app = createApp(config, logger);
  const address = await app.listen();
  logger.info({ address, dataDir: config.dataDir, models: app.services.models.list().map((m) => `${m.id} → ${m.engine}`) }, 'voicegate ready');

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

main().catch((err) => {
  console.error(err instanceof ConfigError ? `voicegate: ${err.message}` : err);
  process.exit(1);
});
