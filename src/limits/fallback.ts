/**
 * @module limits/fallback
 * The shared counters (Redis) with a local fallback, the default
 * (`limits.whenSharedCountersFail: local`): Redis holds nothing but the
 * counters, so losing it should loosen the limits for a while rather than
 * refuse every limited request.
 *
 * While Redis answers, every call goes to it, and this server keeps a
 * heartbeat there, from which it learns how many servers are alive. The
 * first call (or heartbeat) that fails switches this server to local
 * counting, within that same request: an organisation's concurrency limit
 * and each key's rate are divided among the servers alive when Redis last
 * answered (or `limits.expectedGateways`), rounded up, and enforced here
 * against this server's own open leases, those taken before the outage
 * included, and a fresh local rate window. So the fleet admits at most
 * N × ⌈limit / N⌉ ≤ limit + N − 1 at once, once the streams that were open
 * when Redis went away have ended (they are never cut).
 *
 * The heartbeat keeps probing. When Redis answers again the counts are
 * resynchronised before it is used again: the leases of streams still open
 * are renewed (the ones taken before the outage) or written back over the
 * cap (the ones taken during it), releases that could not be written are
 * written, and the local rate windows are dropped. Every lease is released
 * exactly once, wherever it is held. Billing never depends on any of this.
 */
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import type { Lease, LimitCounters, LimitsStatus, RateDecision } from './counters.js';
import { InProcessLimits } from './in-process.js';
import type { RedisLimits } from './redis.js';

export interface FallbackLimitsOptions {
  /** The servers to divide a limit among while Redis is away; null: those alive when it last answered. */
  expectedGateways: number | null;
  /** How long a server counts as alive after its last heartbeat (the lease TTL). */
  aliveTtlMs: number;
  /** How often the heartbeat runs; while degraded, how often Redis is probed. */
  heartbeatMs?: number;
  logger?: Logger;
}

/** A lease this server handed out: backed by one in Redis, or not (taken during an outage, not yet written back). */
interface Tracked {
  orgId: string;
  shared: Lease | null;
  /** A write-back is under way. */
  restoring: boolean;
  released: boolean;
}

export const HEARTBEAT_MS = 1000;

function unreachable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'limits_unavailable';
}

export class FallbackLimits implements LimitCounters {
  /** When this server fell back to local counting; null while the shared counters are used. */
  private degradedSince: number | null = null;
  private fallbacks = 0;
  /** Rate windows while degraded; replaced by a fresh one at each recovery. */
  private local = new InProcessLimits();
  /** Every lease this server holds, by organisation, wherever it is backed. */
  private readonly leases = new Map<string, Set<Tracked>>();
  /** Live servers as of the last heartbeat Redis answered; null before the first. */
  private alive: number | null = null;
  private readonly timer: NodeJS.Timeout;
  private ticking = false;
  private closed = false;

  constructor(
    private readonly shared: RedisLimits,
    private readonly options: FallbackLimitsOptions,
  ) {
    this.timer = setInterval(() => void this.tick(), options.heartbeatMs ?? HEARTBEAT_MS);
    this.timer.unref();
    void this.tick();
  }

  async acquire(orgId: string, max: number): Promise<Lease | null> {
    if (this.degradedSince === null) {
      try {
        const lease = await this.shared.acquire(orgId, max);
        return lease && this.track(orgId, lease);
      } catch (err) {
        if (!unreachable(err)) throw err;
        this.degrade(err);
      }
    }
    if (this.held(orgId) >= this.share(max)) return null;
    return this.track(orgId, null);
  }

  async consume(keyId: string, requests: number, perSeconds: number): Promise<RateDecision> {
    if (this.degradedSince === null) {
      try {
        return await this.shared.consume(keyId, requests, perSeconds);
      } catch (err) {
        if (!unreachable(err)) throw err;
        this.degrade(err);
      }
    }
    return this.local.consume(keyId, this.share(requests), perSeconds);
  }

  /** The organisation's leases across the servers; while degraded, this server's own. */
  async active(orgId: string): Promise<number> {
    if (this.degradedSince === null) {
      try {
        return await this.shared.active(orgId);
      } catch (err) {
        if (!unreachable(err)) throw err;
        this.degrade(err);
      }
    }
    return this.held(orgId);
  }

  status(): LimitsStatus {
    return { state: this.degradedSince === null ? 'shared' : 'degraded', fallbacks: this.fallbacks, gateways: this.gateways() };
  }

  get gatewayId(): string | undefined {
    return this.shared.gatewayId;
  }

  /** The servers alive, read from Redis (rejects while it does not answer; `status().gateways` is the count last seen). */
  liveGateways(): Promise<{ self: string; alive: string[] }> {
    return this.shared.liveGateways();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.shared.close();
  }

  /** The servers a limit is divided among. */
  private gateways(): number {
    return this.options.expectedGateways ?? this.alive ?? 1;
  }

  /** This server's part of a limit: ⌈limit / servers⌉, at least 1. */
  private share(limit: number): number {
    return Math.max(1, Math.ceil(limit / this.gateways()));
  }

  private held(orgId: string): number {
    return this.leases.get(orgId)?.size ?? 0;
  }

  private track(orgId: string, shared: Lease | null): Lease {
    const tracked: Tracked = { orgId, shared, restoring: false, released: false };
    let set = this.leases.get(orgId);
    if (!set) this.leases.set(orgId, (set = new Set()));
    set.add(tracked);
    let released: Promise<void> | null = null;
    return { release: () => (released ??= this.untrack(tracked)) };
  }

  private async untrack(tracked: Tracked): Promise<void> {
    tracked.released = true;
    const set = this.leases.get(tracked.orgId);
    set?.delete(tracked);
    if (set?.size === 0) this.leases.delete(tracked.orgId);
    // A lease being written back is released by the write-back once it lands.
    await tracked.shared?.release();
  }

  /** The heartbeat: counts the live servers, notices an outage, and recovers from one. */
  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      this.alive = await this.shared.heartbeat(this.options.aliveTtlMs);
      if (this.degradedSince !== null) await this.recover();
    } catch (err) {
      if (unreachable(err)) this.degrade(err);
      else this.options.logger?.error({ err }, 'limit counters: heartbeat failed');
    } finally {
      this.ticking = false;
    }
  }

  /** Switches to local counting; logged once per outage. */
  private degrade(err: unknown): void {
    if (this.degradedSince !== null || this.closed) return;
    this.degradedSince = performance.now();
    this.fallbacks++;
    const gateways = this.gateways();
    this.options.logger?.warn(
      { err, gateways, expectedGateways: this.options.expectedGateways, alive: this.alive },
      `shared limit counters unavailable: limits are enforced on this server until Redis answers, each divided among ${gateways} server(s)`,
    );
  }

  /**
   * Writes this server's counts back to Redis, then uses it again. Rejects (and stays degraded)
   * when Redis fails on the way; the next heartbeat tries again.
   */
  private async recover(): Promise<void> {
    // Leases taken before the outage (and lapsed since, or lost with a restarted Redis) and releases that failed.
    await this.shared.renewNow();
    let restored = 0;
    // Leases taken during the outage, including any taken while this runs: no await between the last check and the switch.
    for (;;) {
      const pending: Tracked[] = [];
      for (const set of this.leases.values()) for (const t of set) if (!t.shared && !t.restoring) pending.push(t);
      if (pending.length === 0) break;
      const results = await Promise.allSettled(pending.map((t) => this.restore(t)));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      restored += pending.length;
    }
    if (this.closed) return;
    const outageMs = Math.round(performance.now() - this.degradedSince!);
    this.degradedSince = null;
    this.local = new InProcessLimits();
    this.options.logger?.info({ restored, outageMs }, 'shared limit counters reachable again: open leases written back, local counts dropped');
  }

  private async restore(tracked: Tracked): Promise<void> {
    tracked.restoring = true;
    try {
      const lease = await this.shared.hold(tracked.orgId);
      tracked.shared = lease;
      // Its request ended while the lease was being written: release it now, once.
      if (tracked.released) await lease.release();
    } finally {
      tracked.restoring = false;
    }
  }
}
