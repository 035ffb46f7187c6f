/**
 * @module cluster/redis
 * The change bus across servers: Redis pub/sub on one channel under the key
 * prefix. Publishing uses a fail-fast command connection; listening uses its
 * own subscriber connection (a connection in subscriber mode can do nothing
 * else), opened only once something subscribes, so the CLI, which only
 * publishes, opens one connection. ioredis re-subscribes after a reconnect;
 * notices sent while a server was cut off are lost, which its caches' short
 * lifetime covers, and `onMissed` listeners hear of every re-subscription
 * (the gate then drops all it cached).
 *
 * A publisher's own listeners hear a change directly, before it is sent, so
 * the admin API takes effect on its own server at once even with Redis down;
 * the echo that comes back from Redis is ignored.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../log/logger.js';
import { RedisConnection } from '../redis/connection.js';
import { deliver, type AccountsChange, type ChangeBus } from './change-bus.js';

export interface RedisChangeBusOptions {
  url: string;
  keyPrefix: string;
  timeoutMs: number;
  logger?: Logger;
}

const id = z.string().min(1).max(200);
const messageSchema = z.object({
  origin: z.string(),
  change: z.object({
    keyId: id.optional(),
    orgId: id.optional(),
    purge: z.object({ orgId: id.optional(), voiceId: id.optional() }).optional(),
    model: z.object({ imported: id.optional(), deleted: id.optional() }).optional(),
  }),
});

export class RedisChangeBus implements ChangeBus {
  /** The channel every server listens on. */
  readonly channel: string;
  private readonly origin = randomUUID();
  private readonly publisher: RedisConnection;
  private subscriber: RedisConnection | null = null;
  private subscribed: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(change: AccountsChange) => void>();
  private readonly missed = new Set<() => void>();

  constructor(private readonly options: RedisChangeBusOptions) {
    this.channel = `${options.keyPrefix}accounts:changes`;
    this.publisher = new RedisConnection({ url: options.url, timeoutMs: options.timeoutMs, name: 'changes', logger: options.logger });
  }

  async publish(change: AccountsChange): Promise<void> {
    this.deliver(change);
    await this.publisher.settled();
    try {
      await this.publisher.client.publish(this.channel, JSON.stringify({ origin: this.origin, change }));
    } catch (err) {
      this.publisher.failed(err);
      throw err;
    }
  }

  subscribe(listener: (change: AccountsChange) => void): () => void {
    const entry = (change: AccountsChange) => listener(change);
    this.listeners.add(entry);
    if (!this.subscriber) this.listen();
    return () => this.listeners.delete(entry);
  }

  onMissed(listener: () => void): () => void {
    const entry = () => listener();
    this.missed.add(entry);
    return () => this.missed.delete(entry);
  }

  /** Resolves once this bus is subscribed in Redis (at once when nothing subscribed); rejects if it closed first. */
  ready(): Promise<void> {
    return this.subscribed;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.missed.clear();
    await Promise.all([this.publisher.close(), this.subscriber?.close()]);
  }

  private listen(): void {
    const subscriber = new RedisConnection({ url: this.options.url, timeoutMs: this.options.timeoutMs, name: 'changes-subscriber', logger: this.options.logger, subscriber: true });
    this.subscriber = subscriber;
    subscriber.client.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.received(message);
    });
    this.subscribed = subscriber.client.subscribe(this.channel).then(() => undefined);
    this.subscribed.catch(() => {});
    // A 'ready' after the connection closed (or never opened) is a reconnect, on which ioredis subscribes again: notices sent meanwhile were lost.
    let lost = false;
    subscriber.client.on('close', () => (lost = true));
    subscriber.client.on('ready', () => {
      if (lost) this.reportMissed();
      lost = false;
    });
  }

  private received(message: string): void {
    let parsed: z.infer<typeof messageSchema>;
    try {
      parsed = messageSchema.parse(JSON.parse(message));
    } catch {
      this.options.logger?.warn({ channel: this.channel }, 'ignored a malformed account change notice');
      return;
    }
    if (parsed.origin !== this.origin) this.deliver(parsed.change);
  }

  private reportMissed(): void {
    for (const listener of this.missed) {
      try {
        listener();
      } catch (err) {
        this.options.logger?.error({ err }, 'account change listener failed');
      }
    }
  }

  private deliver(change: AccountsChange): void {
    deliver(this.listeners, change, (err) => this.options.logger?.error({ err }, 'account change listener failed'));
  }
}
