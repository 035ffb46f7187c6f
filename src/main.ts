#!/usr/bin/env node
/**
 * @module main
 * The `voicegate` command: `serve` (the default, what `npm start` runs) and
 * the operator's account and model commands. Loads configuration first so every
 * command works on the same data directory.
 */
import { parseArgs } from 'node:util';
import { ACCOUNT_COMMANDS, ACCOUNTS_USAGE, runAccountsCommand, UsageError } from './cli/accounts.js';
import { MODELS_USAGE, ModelsError, runModels } from './cli/models/command.js';
import { SAY_USAGE, SayError, runSay } from './cli/say/command.js';
import { HEALTHCHECK_USAGE, runHealthcheck } from './cli/healthcheck.js';
import { CACHE_USAGE, runCacheCommand } from './cli/cache.js';
import { serve } from './cli/serve.js';
import { ConfigError, loadConfig } from './config/load.js';

const USAGE = `Usage: voicegate [serve] [--config path.json] [--tls self-signed]
       voicegate <accounts command> [--config path.json]
       ${SAY_USAGE.split('\n')[0]}
       voicegate models list|pull|verify|remove|import
       voicegate healthcheck
       voicegate cache purge

Starts the Voicegate text-to-speech server, speaks text into a file, manages its accounts or
installs local neural voices.
  --config <file>   JSON configuration file (see README; or VOICEGATE_CONFIG); VOICEGATE_* variables override it
  --tls self-signed serve HTTPS/WSS with a development CA kept under <dataDir>/tls (see README)
  -h, --help        show this help

${ACCOUNTS_USAGE}

${SAY_USAGE}

${MODELS_USAGE}

${HEALTHCHECK_USAGE}

${CACHE_USAGE}`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: { config: { type: 'string' }, tls: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const command = positionals[0] ?? 'serve';
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.tls !== undefined) {
    if (values.tls !== 'self-signed') throw new UsageError(`--tls takes only self-signed; a certificate and key are set in the config or VOICEGATE_TLS_CERT/VOICEGATE_TLS_KEY\n\n${USAGE}`);
    if (command !== 'serve') throw new UsageError(`--tls applies to serve only\n\n${USAGE}`);
  }
  const file = typeof values.config === 'string' ? values.config : process.env.VOICEGATE_CONFIG || undefined;
  const config = loadConfig({ file, tls: values.tls === 'self-signed' ? 'self-signed' : undefined });
  if (command === 'serve') return serve(config);
  if (command === 'say') return runSay(config, argv);
  if (command === 'models') return runModels(config, argv);
  if (command === 'healthcheck') {
    process.exitCode = await runHealthcheck(config);
    return;
  }
  if (command === 'cache') return runCacheCommand(config, argv);
  if (ACCOUNT_COMMANDS.has(command)) return runAccountsCommand(config, argv);
  throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof UsageError || err instanceof SayError || err instanceof ModelsError) console.error(`voicegate: ${err.message}`);
  else console.error(err);
  process.exit(err instanceof UsageError ? 2 : 1);
});
