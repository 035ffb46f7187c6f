/**
 * @module bench/server-child
 * A Voicegate server for the benchmarks, run as a child process: takes config
 * overrides as a JSON argument, keeps its state in a fresh temporary data
 * directory, listens on an ephemeral loopback port with silent logs, prints
 * `{"url", "pid", "engines", "apiKey", "wyomingPort"}` as one JSON line (apiKey: the
 * key made on first start when accounts are on; wyomingPort: with `wyoming.port` set), and closes cleanly on SIGTERM
 * (so `--cpu-prof` profiles get written).
 *
 * With `BENCH_FIRST_AUDIO=1` it also times every synthesis's first audio on
 * its own side, from the server's diagnostics events: from the handler's
 * start (the event's `ttfaMs`) and from the request's arrival (Node's
 * `request` event, headers parsed) to the first audio handed to the socket.
 * The samples are served, and forgotten, by `GET /first-audio` on a second
 * loopback port (`firstAudioUrl` in the ready line): JSON `[[at, cache,
 * fromHandlerMs, fromArrivalMs], …]`, `at` in epoch ms, cache 1 hit, 0 miss,
 * -1 none. Off, none of this is installed.
 */
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import type { SynthesisEnd, SynthesisFirstAudio } from '../src/synthesis/diagnostics.js';
import { reportReady } from './lib/child.js';
import { installPgTrace } from './lib/pg-trace.js';

// BENCH_PG_TRACE=1: statements, pool waits and event-loop delay, printed on stderr at exit (lib/pg-trace).
const pgTrace = process.env.BENCH_PG_TRACE ? installPgTrace() : null;

const overrides = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const dataDir = mkdtempSync(join(tmpdir(), 'voicegate-bench-'));
// The audio cache off unless a benchmark asks for it: the benchmarks repeat their texts, and measure synthesis.
const config = loadConfig({ env: {}, overrides: { dataDir, cache: { enabled: false }, ...overrides, server: { ...(overrides.server as object), host: '127.0.0.1', port: 0 } } });
const app = await createApp(config, createLogger('silent'));
const firstAudioUrl = process.env.BENCH_FIRST_AUDIO === '1' ? await timeFirstAudio() : null;
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
reportReady({ url, pid: process.pid, engines: app.services.engines.list().map((engine) => engine.info()), apiKey: bootstrap?.key ?? null, firstAudioUrl, wyomingPort: app.wyomingAddress?.port ?? null });

/** Records first audio as the server sees it; resolves with the URL its samples are read from. */
async function timeFirstAudio(): Promise<string> {
  const arrivedAt = new WeakMap<IncomingMessage, number>();
  const arrivals = new Map<string, number>();
  let samples: [number, number, number, number][] = [];
  // Node's `request` event: the headers are parsed; the body (one small JSON) is read next.
  app.http.server.prependListener('request', (req: IncomingMessage) => arrivedAt.set(req, performance.now()));
  app.http.addHook('onRequest', (request, _reply, done) => {
    const at = arrivedAt.get(request.raw);
    if (at !== undefined) arrivals.set(String(request.id), at);
    done();
  });
  subscribe('voicegate:synthesis:first-audio', (message) => {
    const now = performance.now();
    const event = message as SynthesisFirstAudio;
    // Only this server's requests: not the warm-up's, which run before it listens (src/warm-up.ts).
    if (event.instance !== app.services.instanceId) return;
    const arrived = arrivals.get(event.requestId);
    samples.push([performance.timeOrigin + now, event.cache === 'hit' ? 1 : event.cache === 'miss' ? 0 : -1, event.ttfaMs, arrived === undefined ? NaN : now - arrived]);
  });
  subscribe('voicegate:synthesis:end', (message) => arrivals.delete((message as SynthesisEnd).requestId));
  const stats = createServer((req, res) => {
    if (req.url !== '/first-audio') return void res.writeHead(404).end();
    const taken = samples;
    samples = [];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(taken));
  });
  await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));
  stats.unref();
  return `http://127.0.0.1:${(stats.address() as AddressInfo).port}/first-audio`;
}
