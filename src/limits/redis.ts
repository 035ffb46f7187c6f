/**
 * @module limits/redis
 * Counters shared by every server that points at one Redis, so an
 * organisation's limits hold for the deployment as a whole.
 *
 * Concurrency: a sorted set per organisation of lease id → expiry. A lease
 * lives `leaseTtlMs` unless renewed; this process renews all the leases it
 * holds every third of that, so a crashed server's slots come back within the
 * TTL. Rate: a sliding-window log per key (a sorted set of request times), the
 * same rule as the in-process counters. Every read-modify-write is one Lua
 * script, atomic in Redis, and times come from Redis's clock, so servers with
 * skewed clocks agree.
 *
 * Every call fails with 503 `limits_unavailable` (Retry-After: 1) when Redis
 * does not answer within the timeout. On their own these counters then
 * refuse limited requests (`limits.whenSharedCountersFail: refuse`); by
 * default `FallbackLimits` (fallback.ts) wraps them and counts locally
 * meanwhile. A release that could not be written is retried with the next
 * renewals until it is written or its lease has lapsed anyway, so a slot
 * freed during an outage is free again as soon as Redis answers. Each
 * server also keeps a heartbeat in Redis, from which the fallback knows how
 * many servers share the limits; see docs/scale-out.md.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import { RedisConnection } from '../redis/connection.js';
import type { Lease, LimitCounters, LimitsStatus, RateDecision } from './counters.js';

export interface RedisLimitsOptions {
  url: string;
  /** Every key starts with this (`voicegate:` by default), so deployments can share a Redis. */
  keyPrefix: string;
  /** How long a lease outlives its last renewal (1–30 s). */
  leaseTtlMs: number;
  /** Connect and command timeout. */
  timeoutMs: number;
  logger?: Logger;
}

/** Milliseconds on Redis's clock; expired lease and window entries are dropped before every decision. */
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function expire_with_last(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
`;

const SCRIPTS = {
  /** KEYS: leases · ARGV: max, lease id, ttl → 1 taken, 0 full. */
  vgLeaseAcquire: `${PRELUDE}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
expire_with_last(KEYS[1])
return 1`,
  /**
   * KEYS: leases · ARGV: ttl, lease ids… → how many had lapsed. A lapsed lease
   * is taken again even over the cap: its request is still running and must be counted.
   */
  vgLeaseRenew: `${PRELUDE}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lapsed = 0
for i = 2, #ARGV do
  lapsed = lapsed + redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
end
expire_with_last(KEYS[1])
return lapsed`,
  /** KEYS: leases · ARGV: lease id → 1 released, 0 already gone. */
  vgLeaseRelease: `${PRELUDE}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZREM', KEYS[1], ARGV[1])`,
  /** KEYS: live servers · ARGV: server id, ttl → servers whose heartbeat has not lapsed, this one included. */
  vgHeartbeat: `${PRELUDE}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
expire_with_last(KEYS[1])
return redis.call('ZCARD', KEYS[1])`,
  /** KEYS: live servers → their ids (heartbeats that have not lapsed). */
  vgGateways: `${PRELUDE}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms())
return redis.call('ZRANGE', KEYS[1], 0, -1)`,
  /** KEYS: leases → live leases. */
  vgLeaseCount: `${PRELUDE}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms())
return redis.call('ZCARD', KEYS[1])`,
  /** KEYS: window · ARGV: requests, window ms, entry id → 0 allowed, else ms until a slot frees. */
  vgRateConsume: `${PRELUDE}
local now = now_ms()
local requests = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= requests then
  local freeing = redis.call('ZRANGE', KEYS[1], count - requests, count - requests, 'WITHSCORES')
  return math.max(1, tonumber(freeing[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return 0`,
} as const;

type Scripts = {
  vgLeaseAcquire(key: string, max: number, id: string, ttlMs: number): Promise<number>;
  vgLeaseRenew(key: string, ttlMs: number, ...ids: string[]): Promise<number>;
  vgLeaseRelease(key: string, id: string): Promise<number>;
  vgLeaseCount(key: string): Promise<number>;
  vgHeartbeat(key: string, instance: string, ttlMs: number): Promise<number>;
  vgGateways(key: string): Promise<string[]>;
  vgRateConsume(key: string, requests: number, windowMs: number, id: string): Promise<number>;
};

function unavailable(): ApiError {
  return new ApiError('limits_unavailable', {}, { 'retry-after': '1' });
}

export class RedisLimits implements LimitCounters {
  private readonly connection: RedisConnection;
  private readonly scripts: Scripts;
  /** Leases this process holds: lease id → the organisation's lease key. */
  private readonly held = new Map<string, string>();
  /** Releases that could not be written: lease id → its key and when the release was tried. Retried with each renewal. */
  private readonly unreleased = new Map<string, { key: string; at: number }>();
  private renewTimer: NodeJS.Timeout | null = null;
  private renewal: Promise<void> | null = null;
  private heartbeats = false;
  private closed = false;
  /** Unique per process; with a counter it names leases and window entries. */
  private readonly instance = randomBytes(6).toString('hex');
  private sequence = 0;

  get gatewayId(): string {
    return this.instance;
  }

  constructor(private readonly options: RedisLimitsOptions) {
    if (options.leaseTtlMs < 1000 || options.leaseTtlMs > 30_000) throw new RangeError('leaseTtlMs must be 1000–30000');
    this.connection = new RedisConnection({ url: options.url, timeoutMs: options.timeoutMs, name: 'limits', logger: options.logger });
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      this.connection.client.defineCommand(name, { numberOfKeys: 1, lua });
    }
    this.scripts = this.connection.client as unknown as Scripts;
  }

  async acquire(orgId: string, max: number): Promise<Lease | null> {
    const key = this.leaseKey(orgId);
    const id = this.nextId();
    let taken: number;
    try {
      taken = await this.call(() => this.scripts.vgLeaseAcquire(key, max, id, this.options.leaseTtlMs));
    } catch (err) {
      // The script may have run after all (a reply that came too late): give the slot back rather than let it sit out its TTL.
      void this.giveBack(key, id);
      throw err;
    }
    if (taken !== 1) return null;
    return this.lease(key, id);
  }

  /**
   * Takes a slot whatever the cap, for a request that is already running (one admitted while Redis
   * was away, written back when it answers again); renewed and released like any other lease.
   */
  async hold(orgId: string): Promise<Lease> {
    const key = this.leaseKey(orgId);
    const id = this.nextId();
    try {
      await this.call(() => this.scripts.vgLeaseRenew(key, this.options.leaseTtlMs, id));
    } catch (err) {
      void this.giveBack(key, id);
      throw err;
    }
    return this.lease(key, id);
  }

  /** Marks this server alive for `ttlMs`; returns how many servers are (their heartbeats have not lapsed). */
  async heartbeat(ttlMs: number): Promise<number> {
    this.heartbeats = true;
    return this.call(() => this.scripts.vgHeartbeat(this.gatewaysKey(), this.instance, ttlMs));
  }

  /** The ids of the servers whose heartbeat has not lapsed (this one once it has beaten), and this server's. */
  async liveGateways(): Promise<{ self: string; alive: string[] }> {
    return { self: this.instance, alive: await this.call(() => this.scripts.vgGateways(this.gatewaysKey())) };
  }

  /**
   * Renews every lease held and writes the releases that failed, now; rejects if Redis did not take
   * them all. Leases that lapsed (Redis restarted empty, or was away past their TTL) are taken again.
   */
  renewNow(): Promise<void> {
    if (this.closed) return Promise.reject(unavailable());
    return (this.renewal ??= this.renew().finally(() => (this.renewal = null)));
  }

  status(): LimitsStatus {
    return { state: this.connection.client.status === 'ready' ? 'shared' : 'unavailable' };
  }

  private lease(key: string, id: string): Lease {
    this.held.set(id, key);
    this.startRenewing();
    let released: Promise<void> | null = null;
    return { release: () => (released ??= this.release(key, id)) };
  }

  /** Removes a lease id from Redis, or remembers to (never throws). */
  private async giveBack(key: string, id: string): Promise<void> {
    try {
      await this.scripts.vgLeaseRelease(key, id);
    } catch (err) {
      this.connection.failed(err);
      if (this.closed) return;
      this.unreleased.set(id, { key, at: performance.now() });
      this.startRenewing();
    }
  }

  async consume(keyId: string, requests: number, perSeconds: number): Promise<RateDecision> {
    const retryAfterMs = await this.call(() => this.scripts.vgRateConsume(this.rateKey(keyId), requests, perSeconds * 1000, this.nextId()));
    return retryAfterMs === 0 ? { allowed: true } : { allowed: false, retryAfterMs };
  }

  async active(orgId: string): Promise<number> {
    return this.call(() => this.scripts.vgLeaseCount(this.leaseKey(orgId)));
  }

  /** Stops renewing, takes this server out of the heartbeat set and disconnects. Leases still held are not released: they lapse within the TTL. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopRenewing();
    this.held.clear();
    this.unreleased.clear();
    if (this.heartbeats && this.connection.client.status === 'ready') await this.connection.client.zrem(this.gatewaysKey(), this.instance).catch(() => {});
    await this.connection.close();
  }

  /** Gives a slot back; if Redis cannot be reached the release is retried with the renewals until the lease would have lapsed (never throws). */
  private async release(key: string, id: string): Promise<void> {
    this.held.delete(id);
    if (this.held.size === 0 && this.unreleased.size === 0) this.stopRenewing();
    if (this.closed) return;
    await this.giveBack(key, id);
  }

  private startRenewing(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(() => void this.renewNow().catch(() => {}), Math.floor(this.options.leaseTtlMs / 3));
    this.renewTimer.unref();
  }

  private stopRenewing(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }

  /**
   * Extends every lease this process holds, one script call per organisation, and retries the
   * releases that failed (those older than twice the TTL have lapsed in Redis and are dropped).
   * Rejects when any call failed.
   */
  private async renew(): Promise<void> {
    const now = performance.now();
    for (const [id, { at }] of this.unreleased) if (now - at > 2 * this.options.leaseTtlMs) this.unreleased.delete(id);
    const byKey = new Map<string, string[]>();
    for (const [id, key] of this.held) {
      const ids = byKey.get(key);
      if (ids) ids.push(id);
      else byKey.set(key, [id]);
    }
    const renewals = [...byKey].map(async ([key, ids]) => {
      const lapsed = await this.scripts.vgLeaseRenew(key, this.options.leaseTtlMs, ...ids);
      if (lapsed > 0) {
        // Redis was unreachable or restarted, or this process went unheard past the lease time (a stalled or starved event loop).
        this.options.logger?.warn({ lapsed }, 'concurrency leases had lapsed before their renewal; taken again, over the cap if need be');
      }
    });
    const releases = [...this.unreleased].map(async ([id, { key }]) => {
      await this.scripts.vgLeaseRelease(key, id);
      this.unreleased.delete(id);
    });
    const results = await Promise.allSettled([...renewals, ...releases]);
    if (this.held.size === 0 && this.unreleased.size === 0) this.stopRenewing();
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) {
      this.connection.failed(failed.reason);
      throw unavailable();
    }
  }

  /** Runs one command; any failure (refused, timed out, closed) becomes `limits_unavailable`. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) throw unavailable();
    await this.connection.settled();
    try {
      return await command();
    } catch (err) {
      this.connection.failed(err);
      throw unavailable();
    }
  }

  private leaseKey(orgId: string): string {
    return `${this.options.keyPrefix}limits:leases:${orgId}`;
  }

  private gatewaysKey(): string {
    return `${this.options.keyPrefix}limits:gateways`;
  }

  private rateKey(keyId: string): string {
    return `${this.options.keyPrefix}limits:rate:${keyId}`;
  }

  private nextId(): string {
    return `${this.instance}:${(this.sequence++).toString(36)}`;
  }
}
