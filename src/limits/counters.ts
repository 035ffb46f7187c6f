/**
 * @module limits/counters
 * Per-organisation concurrency and per-key rate counters behind one async
 * interface, so the in-process counters of a single server and the shared
 * Redis counters of several servers are interchangeable for the gate.
 */

/** A held concurrency slot. `release` is idempotent; a shared implementation also lets it lapse if never released. */
export interface Lease {
  release(): Promise<void>;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/**
 * Where the counts are kept now: `local` (one server's own, by configuration), `shared` (Redis
 * answers), `degraded` (Redis is away and this server enforces the limits on its own share of
 * them) or `unavailable` (Redis is away and limited requests are refused).
 */
export type LimitsState = 'local' | 'shared' | 'degraded' | 'unavailable';

export interface LimitsStatus {
  state: LimitsState;
  /** How many times these counters fell back to counting locally (shared counters with a local fallback). */
  fallbacks?: number;
  /** The servers an organisation's limits are divided among while degraded. */
  gateways?: number;
}

export interface LimitCounters {
  /** Takes one of `max` concurrency slots for the org; null when all are taken. */
  acquire(orgId: string, max: number): Promise<Lease | null>;
  /** Counts one request for the key against `requests` per `perSeconds` (sliding window). */
  consume(keyId: string, requests: number, perSeconds: number): Promise<RateDecision>;
  /** Active slots of an org (for tests and metrics). */
  active(orgId: string): Promise<number>;
  /** How the counters stand, for `/readyz` and the metrics (read often: no I/O). */
  status?(): LimitsStatus;
  /**
   * Shared counters: the ids of the servers alive (their heartbeats in Redis) and this server's
   * among them (random per process, not the diagnostics instance id); rejects when Redis does not answer.
   */
  liveGateways?(): Promise<{ self: string; alive: string[] }>;
  /** Shared counters: this server's id in the heartbeat set (what `liveGateways` names it), known without I/O. */
  readonly gatewayId?: string;
  /** Stops timers and connections. */
  close(): Promise<void>;
}
