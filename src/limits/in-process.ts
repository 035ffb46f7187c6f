/**
 * @module limits/in-process
 * The counters of a single server: a slot count per organisation and a
 * sliding-window log per key, in memory. Right when one process serves all
 * traffic; several processes would each enforce the limits on their own.
 */
import type { Lease, LimitCounters, LimitsStatus, RateDecision } from './counters.js';

export class InProcessLimits implements LimitCounters {
  private readonly slots = new Map<string, number>();
  private readonly windows = new Map<string, { times: number[]; windowMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async acquire(orgId: string, max: number): Promise<Lease | null> {
    const used = this.slots.get(orgId) ?? 0;
    if (used >= max) return null;
    this.slots.set(orgId, used + 1);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        const left = (this.slots.get(orgId) ?? 1) - 1;
        if (left <= 0) this.slots.delete(orgId);
        else this.slots.set(orgId, left);
      },
    };
  }

  async consume(keyId: string, requests: number, perSeconds: number): Promise<RateDecision> {
    const now = this.now();
    const windowMs = perSeconds * 1000;
    if (this.windows.size > 10_000) this.sweep(now);
    const times = (this.windows.get(keyId)?.times ?? []).filter((t) => t > now - windowMs);
    this.windows.set(keyId, { times, windowMs });
    // After a lowered limit the log may hold more than `requests`; the window frees when enough of the oldest leave it.
    if (times.length >= requests) return { allowed: false, retryAfterMs: Math.max(1, times[times.length - requests] + windowMs - now) };
    times.push(now);
    return { allowed: true };
  }

  /** Forgets keys whose window has emptied, so idle keys do not accumulate. */
  private sweep(now: number): void {
    for (const [key, { times, windowMs }] of this.windows) {
      if (times.length === 0 || times[times.length - 1] <= now - windowMs) this.windows.delete(key);
    }
  }

  async active(orgId: string): Promise<number> {
    return this.slots.get(orgId) ?? 0;
  }

  status(): LimitsStatus {
    return { state: 'local' };
  }

  async close(): Promise<void> {}
}
