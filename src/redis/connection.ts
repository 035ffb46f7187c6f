/**
 * @module redis/connection
 * Opens ioredis connections that fail fast. A command on a request's path
 * gets a connect and a command timeout, no offline queue and no resending
 * after a reconnect: while Redis is away it fails at once instead of waiting,
 * and a command its caller already gave up on is never run later (a late
 * acquire would hold a slot nobody uses). ioredis keeps reconnecting in the
 * background, so service resumes by itself when Redis is back.
 *
 * A subscriber connection is the exception: SUBSCRIBE is safe to queue and
 * replay, so it waits through outages and ioredis re-subscribes on reconnect.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';

export interface RedisConnectionOptions {
  /** `redis://` or `rediss://` (TLS), with user, password and database as usual. */
  url: string;
  /** Connect timeout and per-command timeout. */
  timeoutMs: number;
  /** Names the connection in logs (`limits`, `changes`, …). */
  name: string;
  logger?: Logger;
  /** A connection for SUBSCRIBE: queues while disconnected and re-subscribes after reconnecting. */
  subscriber?: boolean;
}

/** Failures are logged at most this often per connection, so an outage does not flood the log. */
const LOG_EVERY_MS = 10_000;

export class RedisConnection {
  readonly client: Redis;
  private readonly firstAttempt: Promise<void>;
  private down = false;
  private lastLogged = -Infinity;

  constructor(private readonly options: RedisConnectionOptions) {
    const { timeoutMs, subscriber = false } = options;
    this.client = new Redis(options.url, {
      connectionName: `voicegate-${options.name}`,
      connectTimeout: timeoutMs,
      commandTimeout: subscriber ? undefined : timeoutMs,
      enableOfflineQueue: subscriber,
      maxRetriesPerRequest: subscriber ? null : 0,
      autoResendUnfulfilledCommands: false,
      // Reconnect forever, backing off to one attempt every 2 s.
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
    this.client.on('error', (err: Error) => this.failed(err));
    this.client.on('ready', () => {
      if (!this.down) return;
      this.down = false;
      this.lastLogged = -Infinity;
      this.options.logger?.info({ redis: this.options.name }, 'redis reachable again');
    });
    this.firstAttempt = new Promise<void>((resolve) => {
      const settle = () => {
        clearTimeout(timer);
        for (const event of ['ready', 'error', 'end'] as const) this.client.off(event, settle);
        resolve();
      };
      const timer = setTimeout(settle, timeoutMs + 100);
      timer.unref();
      for (const event of ['ready', 'error', 'end'] as const) this.client.once(event, settle);
    });
  }

  /**
   * Resolves once the first connection attempt has succeeded or failed (within
   * the connect timeout), so commands sent while the process starts are not
   * refused merely because the socket is still opening. Later calls return at once.
   */
  settled(): Promise<void> {
    return this.firstAttempt;
  }

  /** Logs a failed command or connection: the first after each recovery, then at most once per LOG_EVERY_MS. */
  failed(err: unknown): void {
    const now = performance.now();
    if (now - this.lastLogged >= LOG_EVERY_MS) {
      this.lastLogged = now;
      this.options.logger?.warn({ redis: this.options.name, err }, 'redis unavailable');
    }
    if (this.client.status !== 'ready') this.down = true;
  }

  /** Sends QUIT (replies to commands already sent still arrive), then stops reconnecting. */
  async close(): Promise<void> {
    try {
      if (this.client.status === 'ready') {
        const quit = this.client.quit();
        const bound = new Promise((resolve) => setTimeout(resolve, this.options.timeoutMs).unref());
        await Promise.race([quit, bound]);
      }
    } catch {
      // Closing anyway.
    } finally {
      this.client.disconnect();
    }
  }
}
