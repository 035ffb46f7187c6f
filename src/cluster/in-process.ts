/**
 * @module cluster/in-process
 * The change bus of a single server: listeners in this process only. Other
 * processes (the CLI) are seen when the gate's caches expire.
 */
import type { Logger } from '../log/logger.js';
import { deliver, type AccountsChange, type ChangeBus } from './change-bus.js';

export class InProcessChangeBus implements ChangeBus {
  private readonly listeners = new Set<(change: AccountsChange) => void>();

  constructor(private readonly logger?: Logger) {}

  async publish(change: AccountsChange): Promise<void> {
    deliver(this.listeners, change, (err) => this.logger?.error({ err }, 'account change listener failed'));
  }

  subscribe(listener: (change: AccountsChange) => void): () => void {
    const entry = (change: AccountsChange) => listener(change);
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  /** Nothing is ever missed in one process. */
  onMissed(): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
