/**
 * @module accounts/store-outage
 * Whether the store answers, as this gateway's accounts see it: the first
 * `store_unavailable` starts an outage, the next answer ends it. For the
 * first `accounts.outageMaxSeconds` of an outage the gateway is `degraded`:
 * it admits callers from its last-known-good copy of their keys and
 * organisations and the credit its share holds (`gate.ts`), and journals the
 * charges it cannot write (`charge-journal.ts`). After that it is
 * `unavailable` and admits nothing more, so an outage that is not a
 * failover does not run on indefinitely. The start and the end of an outage
 * are logged once each, however many calls fail meanwhile.
 */
import type { Logger } from '../log/logger.js';

export type StoreState = 'available' | 'degraded' | 'unavailable';

export class StoreOutage {
  /** When the store stopped answering (epoch ms); null while it answers. */
  private since: number | null = null;

  constructor(
    private readonly maxMs: number,
    private readonly logger: Logger,
  ) {}

  /** A call to the store met `store_unavailable`. */
  failed(): void {
    if (this.since !== null) return;
    this.since = Date.now();
    this.logger.warn({ outage_max_seconds: this.maxMs / 1000 }, 'the store does not answer: admitting from last-known-good keys and held credit, journaling charges');
  }

  /** A call to the store answered. */
  answered(): void {
    if (this.since === null) return;
    this.logger.info({ outage_seconds: Math.round((Date.now() - this.since) / 1000) }, 'the store answers again');
    this.since = null;
  }

  get state(): StoreState {
    if (this.since === null) return 'available';
    return Date.now() - this.since < this.maxMs ? 'degraded' : 'unavailable';
  }

  /** The last-known-good copy of keys and organisations may answer for the store. */
  get servingStale(): boolean {
    return this.state === 'degraded';
  }
}
