/**
 * @module test/helpers/server
 * Starts a real Voicegate server on an ephemeral loopback port for a test
 * file, with quiet logs and a small eSpeak pool.
 */
import { createApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { createLogger } from '../../src/log/logger.js';
import type { RequestGate } from '../../src/synthesis/gate.js';
import { selfSignedPaths } from '../../src/http/tls.js';
import type { DestinationStream } from 'pino';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestServer {
  /** `https://…` when the config turns TLS on. */
  url: string;
  /** The development CA (PEM) in self-signed TLS mode, for clients to trust. */
  ca?: string;
  app: App;
  close(): Promise<void>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

export interface TestServerOptions {
  config?: Partial<ConfigInput>;
  gate?: RequestGate;
  /** A store or limit counters to use instead of the configured ones (fault injection wraps the real ones). */
  store?: AppOptions['store'];
  limits?: AppOptions['limits'];
  /** Engine instances for configured engine ids (see `AppOptions.engines`). */
  engines?: AppOptions['engines'];
  /** Wraps the jobs' storage (see `AppOptions.jobStorage`). */
  jobStorage?: AppOptions['jobStorage'];
  logDestination?: DestinationStream;
  logLevel?: string;
}

/** A fresh, empty data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'voicegate-test-'));
}

/**
 * Accounts are off unless the test's config turns them on, so tests of
 * other concerns need no keys; `dataDir` defaults to a fresh temp folder.
 */
export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  const { config: overrides = {} } = options;
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: tempDataDir(),
      ...overrides,
      accounts: { enabled: false, ...(overrides.accounts ?? {}) },
      // Tests start hundreds of servers: none warms up before ready unless it asks (test/warm-up.test.ts).
      server: { host: '127.0.0.1', port: 0, warmUp: false, ...(overrides.server ?? {}) },
      engines: withoutWarmUp({ espeak: { type: 'espeak', workers: 1 }, ...(overrides.engines ?? {}) }),
    },
  });
  const logger = createLogger(options.logLevel ?? (options.logDestination ? 'info' : 'silent'), options.logDestination);
  const app = await createApp(config, logger, { gate: options.gate, store: options.store, limits: options.limits, engines: options.engines, jobStorage: options.jobStorage });
  const url = await app.listen();
  const tls = config.server.tls;
  return {
    url,
    ca: tls && 'selfSigned' in tls ? readFileSync(selfSignedPaths(config.dataDir).ca, 'utf8') : undefined,
    app,
    close: () => app.close(),
    post: (path, body, headers = {}) =>
      fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  };
}

/** eSpeak engines speak no warm-up jobs unless the test's config sets `warmUpJobs`. */
function withoutWarmUp(engines: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(engines).map(([id, engine]) => [id, (engine as { type?: string }).type === 'espeak' ? { warmUpJobs: 0, ...(engine as object) } : engine]),
  );
}

/** A /tts/bytes body with sensible defaults. */
export function ttsBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model_id: 'gepard-1.0',
    transcript: 'Today is a wonderful day to build something people love!',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
    ...overrides,
  };
}
