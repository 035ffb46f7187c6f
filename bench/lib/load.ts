/**
 * @module bench/lib/load
 * Drives a server with autocannon and summarises a run: successful
 * responses, their body bytes (from Content-Length), exact latency
 * percentiles, the load generator's own CPU use, and (with `loadSlice`) the
 * server process's CPU and memory over the same window. Also the shared
 * knobs (`BENCH_SLICE_SECONDS`, `BENCH_ROUNDS`) and small script helpers.
 */
import autocannon from 'autocannon';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureProcess, type Usage } from './proc.js';

export interface LoadOptions {
  url: string;
  path: string;
  /** JSON bodies, POSTed in rotation (each connection walks the list from the start). */
  bodies: unknown[];
  connections: number;
  seconds: number;
  /** Extra request headers (e.g. an API key). */
  headers?: Record<string, string>;
}

export interface LoadResult {
  /** 2xx responses completed inside the window. */
  ok: number;
  /** Non-2xx responses, errors and timeouts. */
  failed: number;
  /** Sum of the Content-Length of 2xx responses. */
  bodyBytes: number;
  /** Length of the window, as autocannon measured it. */
  seconds: number;
  /** Latency of each 2xx response in ms, sorted. */
  latencies: number[];
  /** CPU seconds the load generator (this process) used. */
  loadgenCpuSeconds: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let bodyBytes = 0;
  const latencies: number[] = [];
  const requests = options.bodies.map((body) => ({
    method: 'POST',
    path: options.path,
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
    onResponse(status: number, _body: string, _context: Record<string, unknown>, headers: Record<string, string | string[]>) {
      if (status >= 200 && status < 300) bodyBytes += Number(headers['content-length'] ?? 0);
    },
  }));
  const cpuBefore = process.cpuUsage();
  const instance = autocannon({ url: options.url, connections: options.connections, duration: options.seconds, pipelining: 1, timeout: 30, requests });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    ok: result['2xx'],
    failed: result.non2xx + result.errors,
    bodyBytes,
    seconds: result.duration,
    latencies: latencies.sort((a, b) => a - b),
    loadgenCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

/** Several runs of one scenario taken as one. */
export function combineLoads(list: LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => list.reduce((n, r) => n + pick(r), 0);
  return {
    ok: sum((r) => r.ok),
    failed: sum((r) => r.failed),
    bodyBytes: sum((r) => r.bodyBytes),
    seconds: sum((r) => r.seconds),
    latencies: list.flatMap((r) => r.latencies).sort((a, b) => a - b),
    loadgenCpuSeconds: sum((r) => r.loadgenCpuSeconds),
  };
}

export interface LoadSlice {
  load: LoadResult;
  /** The server process over the same window. */
  server: Usage;
}

/** One measured load run with the server process watched. */
export async function loadSlice(serverPid: number, options: LoadOptions, run: (options: LoadOptions) => Promise<LoadResult> = runLoad): Promise<LoadSlice> {
  const watch = measureProcess(serverPid);
  const load = await run(options);
  return { load, server: watch.stop() };
}

function envNumber(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(given) && given > 0 ? given : fallback;
}

/** Length of one measured slice: `BENCH_SLICE_SECONDS`, else the benchmark's default (2 unless it says). */
export function sliceSeconds(fallback = 2): number {
  return envNumber('BENCH_SLICE_SECONDS', fallback);
}

/** Measured slices per candidate scenario: `BENCH_ROUNDS`, else the benchmark's default. */
export function rounds(fallback: number): number {
  return Math.round(envNumber('BENCH_ROUNDS', fallback));
}

/** Whether the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === resolve(process.argv[1]);
}

/** Progress notes go to stderr so stdout stays a clean markdown report. */
export function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
