/**
 * @module bench/lib/pg-trace
 * `BENCH_PG_TRACE=1`: where a server child's PostgreSQL time goes. Wraps the
 * `pg` pool and client of the child's own process (the store's module
 * instance) to count statements by their first words, time each from send to
 * answer, time the waits for a pooled connection and the pool's queue length,
 * and samples the event loop's delay. The child prints the summary as one
 * JSON line on stderr when it stops, for the whole run (warm-up included):
 * divide the counts by the requests the load generator saw. A statement with
 * array parameters also reports the mean length of its longest one (a ledger
 * batch's writes).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';

interface Times {
  count: number;
  ms: number[];
  /** Σ of the longest array parameter's length per call: a batch call's writes. */
  items?: number;
}

const statements = new Map<string, Times>();
const connects: Times = { count: 0, ms: [] };
let waitingSeen = 0;
let maxWaiting = 0;
let maxActive = 0;

function label(text: unknown): string {
  const sql = typeof text === 'string' ? text : String((text as { text?: string })?.text ?? '?');
  return sql.replace(/\s+/g, ' ').trim().slice(0, 48);
}

function record(times: Times, started: number): void {
  times.count++;
  times.ms.push(performance.now() - started);
}

function summary(times: Times): Record<string, number> {
  const sorted = [...times.ms].sort((a, b) => a - b);
  const at = (q: number) => Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(3));
  const total = sorted.reduce((sum, ms) => sum + ms, 0);
  return { count: times.count, ...(times.items ? { meanItems: Number((times.items / times.count).toFixed(2)) } : {}), meanMs: Number((total / Math.max(1, sorted.length)).toFixed(3)), p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}

/** Installs the wrappers; the returned function summarises what they saw. */
export function installPgTrace(): () => string {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const name = label(args[0]);
    const times = statements.get(name) ?? { count: 0, ms: [] };
    statements.set(name, times);
    const values = (Array.isArray(args[1]) ? args[1] : ((args[0] as { values?: unknown[] })?.values ?? [])) as unknown[];
    const longest = Math.max(0, ...values.map((value) => (Array.isArray(value) ? value.length : 0)));
    if (longest > 0) times.items = (times.items ?? 0) + longest;
    const started = performance.now();
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...rest: unknown[]) => void;
      args[last] = (...rest: unknown[]) => {
        record(times, started);
        callback(...rest);
      };
      return clientQuery.apply(this, args);
    }
    const result = clientQuery.apply(this, args) as Promise<unknown>;
    void result.then(
      () => record(times, started),
      () => record(times, started),
    );
    return result;
  } as typeof pg.Client.prototype.query;
  const poolConnect = pg.Pool.prototype.connect as (...args: unknown[]) => unknown;
  pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
    const started = performance.now();
    if (this.waitingCount > 0) waitingSeen++;
    maxWaiting = Math.max(maxWaiting, this.waitingCount);
    maxActive = Math.max(maxActive, this.totalCount - this.idleCount);
    if (typeof args[0] === 'function') {
      const callback = args[0] as (...rest: unknown[]) => void;
      return poolConnect.call(this, (...rest: unknown[]) => {
        record(connects, started);
        callback(...rest);
      });
    }
    const result = poolConnect.apply(this, args) as Promise<unknown>;
    void result.then(
      () => record(connects, started),
      () => record(connects, started),
    );
    return result;
  } as typeof pg.Pool.prototype.connect;
  return () =>
    JSON.stringify({
      pgTrace: {
        statements: Object.fromEntries([...statements].sort((a, b) => b[1].count - a[1].count).map(([name, times]) => [name, summary(times)])),
        connects: { ...summary(connects), foundQueue: waitingSeen, maxWaiting, maxCheckedOut: maxActive },
        eventLoopDelayMs: {
          p50: Number((loop.percentile(50) / 1e6).toFixed(3)),
          p99: Number((loop.percentile(99) / 1e6).toFixed(3)),
          max: Number((loop.max / 1e6).toFixed(3)),
        },
      },
    });
}
