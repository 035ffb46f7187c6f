/**
 * @module cluster/roster
 * Each gateway's card in Redis, so one gateway can show the operator all of
 * them: its engines as they stand (workers busy, queue depth, upstream pool
 * members), its audio cache's figures, its status and version. A gateway
 * writes its own card every few seconds with an expiry of three periods, so
 * the card of a gateway that died goes with it. Cards are keyed by the id
 * the gateway has in the limit counters' heartbeat set, the list of gateways
 * alive: that list says who is there, a card says how each one is.
 */
import type { CacheStats } from '../cache/audio-cache.js';
import type { EngineInfo } from '../engines/engine.js';
import type { Logger } from '../log/logger.js';
import { RedisConnection } from '../redis/connection.js';

/** What one gateway says of itself (the shape `GET /admin/engines` gives in `peers`). */
export interface GatewayCard {
  gateway_id: string;
  instance: string;
  version: string;
  status: string;
  engines: EngineInfo[];
  cache: CacheStats | null;
  /** When the card was written (ISO 8601). */
  seen_at: string;
}

export interface RosterOptions {
  url: string;
  keyPrefix: string;
  timeoutMs: number;
  /** How often the card is written; it lapses after three periods. */
  everyMs?: number;
  logger?: Logger;
}

export class GatewayRoster {
  private readonly connection: RedisConnection;
  private timer: NodeJS.Timeout | null = null;
  private gatewayId: string | null = null;
  private readonly everyMs: number;

  constructor(private readonly options: RosterOptions) {
    this.connection = new RedisConnection({ url: options.url, timeoutMs: options.timeoutMs, name: 'roster', logger: options.logger });
    this.everyMs = options.everyMs ?? 5000;
  }

  private key(gatewayId: string): string {
    return `${this.options.keyPrefix}gateway-card:${gatewayId}`;
  }

  /** Writes this gateway's card now and every period after; a write Redis refuses is logged and tried again next period. */
  start(gatewayId: string, card: () => Omit<GatewayCard, 'gateway_id' | 'seen_at'>): void {
    this.gatewayId = gatewayId;
    const write = async () => {
      const value: GatewayCard = { gateway_id: gatewayId, ...card(), seen_at: new Date().toISOString() };
      await this.connection.settled();
      await this.connection.client.set(this.key(gatewayId), JSON.stringify(value), 'PX', this.everyMs * 3).catch((err: unknown) => this.connection.failed(err));
    };
    void write();
    this.timer = setInterval(() => void write(), this.everyMs);
    this.timer.unref();
  }

  /** The cards of these gateways, in order; null for one whose card has not been written or has lapsed. */
  async cards(gatewayIds: readonly string[]): Promise<(GatewayCard | null)[]> {
    if (!gatewayIds.length) return [];
    const values = await this.connection.client.mget(...gatewayIds.map((id) => this.key(id)));
    return values.map((value) => {
      if (value === null) return null;
      try {
        return JSON.parse(value) as GatewayCard;
      } catch {
        return null;
      }
    });
  }

  /** Stops writing and takes this gateway's card away, so it is not shown after it left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.gatewayId && this.connection.client.status === 'ready') await this.connection.client.del(this.key(this.gatewayId)).catch(() => {});
    await this.connection.close();
  }
}
