/**
 * @module cluster/change-bus
 * Tells every server about an account change (a revoked key, new limits,
 * added credits) so each drops what it cached at once, wherever the change
 * was made: the admin API of any server, or the operator CLI.
 */
import type { AccountsChange } from '../accounts/admin.js';

export type { AccountsChange };

export interface ChangeBus {
  /**
   * Announces a change. This process's listeners hear it before the promise
   * settles; other servers shortly after. Rejects when it could not be sent on
   * (the change itself is stored: other servers then see it when their caches expire).
   */
  publish(change: AccountsChange): Promise<void>;
  /** Calls `listener` for every change published by any process; returns the unsubscribe. */
  subscribe(listener: (change: AccountsChange) => void): () => void;
  /**
   * Calls `listener` whenever changes may have gone unheard: the bus lost its connection and has
   * subscribed again (never, for a bus that cannot lose one). Returns the unsubscribe.
   */
  onMissed(listener: () => void): () => void;
  close(): Promise<void>;
}

/** Calls each listener, so one that throws does not keep the change from the others. */
export function deliver(listeners: Iterable<(change: AccountsChange) => void>, change: AccountsChange, onError: (err: unknown) => void): void {
  for (const listener of listeners) {
    try {
      listener(change);
    } catch (err) {
      onError(err);
    }
  }
}
