/**
 * @module bench/server-child
 * A Voicegate server for the benchmarks, run as a child process: takes config
 * overrides as a JSON argument, keeps its state in a fresh temporary data
 * directory, listens on an ephemeral loopback port with silent logs, prints
 * `{"url", "pid", "engines", "apiKey"}` as one JSON line (apiKey: the key
 * made on first start when accounts are on), and closes cleanly on SIGTERM
 * (so `--cpu-prof` profiles get written).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import { reportReady } from './lib/child.js';
import { installPgTrace } from './lib/pg-trace.js';

// BENCH_PG_TRACE=1: statements, pool waits and event-loop delay, printed on stderr at exit (lib/pg-trace).
const pgTrace = process.env.BENCH_PG_TRACE ? installPgTrace() : null;

const overrides = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const dataDir = mkdtempSync(join(tmpdir(), 'voicegate-bench-'));
// The audio cache off unless a benchmark asks for it: the benchmarks repeat their texts, and measure synthesis.
const config = loadConfig({ env: {}, overrides: { dataDir, cache: { enabled: false }, ...overrides, server: { host: '127.0.0.1', port: 0 } } });
const app = await createApp(config, createLogger('silent'));
const url = await app.listen();

process.once('SIGTERM', () => {
  if (pgTrace) process.stderr.write(`${pgTrace()}\n`);
  app.close().then(
    () => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});

// Read loosely: the bootstrap key only exists when accounts are on.
const bootstrap = (app as unknown as { bootstrap?: { key?: string } | null }).bootstrap;
reportReady({ url, pid: process.pid, engines: app.services.engines.list().map((engine) => engine.info()), apiKey: bootstrap?.key ?? null });
