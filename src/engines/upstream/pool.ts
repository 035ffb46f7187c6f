/**
 * @module engines/upstream/pool
 * A pool of remote inference servers for one engine: periodic health
 * probes, least-outstanding-requests routing with a per-server concurrency
 * cap, and ejection of a server that fails repeatedly until a probe passes
 * again. It knows nothing about dialects; the engines on top do.
 */
import type { Logger } from '../../log/logger.js';

export interface UpstreamConfig {
  url: string;
  apiKey?: string;
  maxConcurrent: number;
}

export interface Upstream {
  readonly url: string;
  readonly apiKey?: string;
  readonly maxConcurrent: number;
  healthy: boolean;
  outstanding: number;
  failures: number;
  served: number;
}

export interface PoolOptions {
  healthPath: string;
  probeIntervalMs: number;
  ejectAfterFailures: number;
  logger: Logger;
  /** Label for logs. */
  engineId: string;
  /** The headers that carry a server's key in this dialect (default `Authorization: Bearer`). */
  auth?: (apiKey: string) => Record<string, string>;
}

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

/** Why no server could take a request. */
export type NoUpstream = 'offline' | 'busy';

export class UpstreamPool {
  readonly upstreams: Upstream[];
  private timer: NodeJS.Timeout | null = null;
  private turn = 0;

  constructor(
    configs: UpstreamConfig[],
    private readonly options: PoolOptions,
  ) {
    this.upstreams = configs.map((c) => ({
      url: c.url.replace(/\/+$/, ''),
      apiKey: c.apiKey,
      maxConcurrent: c.maxConcurrent,
      healthy: false,
      outstanding: 0,
      failures: 0,
      served: 0,
    }));
  }

  /** Probes every server once, then keeps probing in the background. */
  async start(): Promise<void> {
    await this.probeAll();
    this.timer = setInterval(() => void this.probeAll(), this.options.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  healthyCount(): number {
    return this.upstreams.filter((u) => u.healthy).length;
  }

  /**
   * Takes the healthy server with the fewest requests in flight (ties rotate),
   * skipping `exclude` (the server a retry just failed on).
   */
  acquire(exclude?: Upstream): Upstream | NoUpstream {
    const healthy = this.upstreams.filter((u) => u.healthy && u !== exclude);
    if (healthy.length === 0) return 'offline';
    const open = healthy.filter((u) => u.outstanding < u.maxConcurrent);
    if (open.length === 0) return 'busy';
    const least = Math.min(...open.map((u) => u.outstanding));
    const candidates = open.filter((u) => u.outstanding === least);
    const chosen = candidates[this.turn++ % candidates.length];
    chosen.outstanding++;
    return chosen;
  }

  release(upstream: Upstream, outcome: 'ok' | 'failed' | 'neutral'): void {
    upstream.outstanding = Math.max(0, upstream.outstanding - 1);
    if (outcome === 'ok') {
      upstream.failures = 0;
      upstream.served++;
    } else if (outcome === 'failed') {
      upstream.failures++;
      if (upstream.healthy && upstream.failures >= this.options.ejectAfterFailures) {
        upstream.healthy = false;
        this.options.logger.warn({ engine: this.options.engineId, upstream: upstream.url, failures: upstream.failures }, 'upstream ejected');
      }
    }
  }

  private async probeAll(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => this.probe(u)));
  }

  private async probe(upstream: Upstream): Promise<void> {
    let ok = false;
    try {
      const response = await fetch(upstream.url + this.options.healthPath, {
        headers: upstream.apiKey ? (this.options.auth ?? bearer)(upstream.apiKey) : {},
        signal: AbortSignal.timeout(Math.min(5000, this.options.probeIntervalMs)),
      });
      await response.arrayBuffer().catch(() => undefined);
      ok = response.ok;
    } catch {
      ok = false;
    }
    if (ok && !upstream.healthy) {
      upstream.healthy = true;
      upstream.failures = 0;
      this.options.logger.info({ engine: this.options.engineId, upstream: upstream.url }, 'upstream healthy');
    } else if (!ok && upstream.healthy) {
      upstream.healthy = false;
      this.options.logger.warn({ engine: this.options.engineId, upstream: upstream.url }, 'upstream failed its health probe');
    }
  }
}
