/**
 * @module cache/shared-tier
 * The audio cache's third tier, shared by every server on one Redis: an entry
 * kept by one server is a hit on another. Each entry is one Redis string,
 * the same blob the disk tier writes (`entry.ts`, digest included), under
 * `<redis.keyPrefix>cache:<entry id>`, with a TTL; an entry whose blob is
 * larger than the tier's own size limit is not sent. A value whose digest
 * does not match (corrupt, truncated) is deleted and counts as a miss.
 *
 * The tier never makes a request fail and never makes it wait long: the
 * connection fails fast (`redis/connection.ts`, its own short timeout), a
 * lookup while Redis is away is a miss without a round trip, a failed one is
 * a miss too, and writes go in the background. After a failed command (a
 * Redis that accepts connections but does not answer), the tier is skipped
 * for a second, so at most one request a second waits out the timeout. Each
 * failure is counted (`unavailable`); the connection logs them at most once
 * per 10 s. ioredis reconnects by itself, and the tier is used again once it has.
 *
 * Purge finds entries with SCAN over the id pattern (an entry id carries its
 * scope and voice, see `audio-cache.ts`) and UNLINKs them.
 */
import type { Logger } from '../log/logger.js';
import { RedisConnection } from '../redis/connection.js';
import { decodeEntry, encodeEntry, type CachedAudio } from './entry.js';

export interface SharedTierOptions {
  url: string;
  /** `redis.keyPrefix`: every key starts with it. */
  keyPrefix: string;
  /** Connect and command timeout of the tier's connection. */
  timeoutMs: number;
  /** A blob larger than this is not kept in Redis. */
  maxEntryBytes: number;
  /** How long an entry lives in Redis after it was written. */
  ttlSeconds: number;
  logger?: Logger;
}

export interface SharedTierStats {
  /** Entries written by this server. */
  writes: number;
  /** Lookups this server answered from Redis. */
  hits: number;
  /** Bytes read from and written to Redis by this server. */
  bytesRead: number;
  bytesWritten: number;
  /** Values whose digest did not match: deleted, treated as misses. */
  corrupt: number;
  /** Lookups, writes or purges skipped or failed because Redis did not answer. */
  unavailable: number;
}

/** After a failed command the tier is skipped this long before it is tried again. */
const BACK_OFF_MS = 1000;

/** Glob characters of SCAN's MATCH, escaped so a key prefix is matched as written. */
const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

export class SharedTier {
  private readonly connection: RedisConnection;
  readonly stats: SharedTierStats = { writes: 0, hits: 0, bytesRead: 0, bytesWritten: 0, corrupt: 0, unavailable: 0 };
  private pending = new Set<Promise<void>>();
  /** performance.now() before which the tier is skipped (after a failed command). */
  private skipUntil = 0;

  constructor(private readonly options: SharedTierOptions) {
    this.connection = new RedisConnection({ url: options.url, timeoutMs: options.timeoutMs, name: 'cache', logger: options.logger });
  }

  get maxEntryBytes(): number {
    return this.options.maxEntryBytes;
  }

  private key(id: string): string {
    return `${this.options.keyPrefix}cache:${id}`;
  }

  /** Whether commands can be sent now; while not, the tier is skipped without a round trip. */
  get reachable(): boolean {
    return this.connection.client.status === 'ready' && performance.now() >= this.skipUntil;
  }

  /** Waits for the first connection attempt (at most the timeout), so a server just started uses the tier. */
  async open(): Promise<void> {
    await this.connection.settled();
  }

  /** The entry, or null: absent, corrupt, or Redis unreachable (never rejects). */
  async get(id: string): Promise<CachedAudio | null> {
    if (!this.reachable) {
      this.stats.unavailable++;
      return null;
    }
    let blob: Buffer | null;
    try {
      blob = await this.connection.client.getBuffer(this.key(id));
    } catch (err) {
      this.unavailable(err);
      return null;
    }
    if (!blob) return null;
    this.stats.bytesRead += blob.length;
    const entry = decodeEntry(blob);
    if (!entry) {
      this.stats.corrupt++;
      this.options.logger?.warn({ entry: id }, 'shared audio cache entry is corrupt (digest mismatch); removed');
      this.background(this.connection.client.unlink(this.key(id)).then(() => {}));
      return null;
    }
    this.stats.hits++;
    return entry;
  }

  /** Writes the entry in the background (skipped when too large or Redis is away); resolves once done, never rejects. */
  put(id: string, entry: CachedAudio): Promise<void> {
    const blob = encodeEntry(entry);
    if (blob.length > this.options.maxEntryBytes) return Promise.resolve();
    if (!this.reachable) {
      this.stats.unavailable++;
      return Promise.resolve();
    }
    return this.background(
      this.connection.client.set(this.key(id), blob, 'EX', this.options.ttlSeconds).then(() => {
        this.stats.writes++;
        this.stats.bytesWritten += blob.length;
      }),
    );
  }

  /**
   * Removes the entries whose ids match `pattern` (a SCAN glob over entry ids, its parts already
   * free of glob characters); returns their ids. Rejects when Redis does not answer.
   */
  async purge(pattern: string): Promise<string[]> {
    await Promise.all(this.pending);
    const client = this.connection.client;
    const prefix = this.key('');
    const removed: string[] = [];
    let cursor = '0';
    try {
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${escapeGlob(this.options.keyPrefix)}cache:${pattern}`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) {
          await client.unlink(...keys);
          removed.push(...keys.map((key) => key.slice(prefix.length)));
        }
      } while (cursor !== '0');
    } catch (err) {
      this.unavailable(err);
      throw err;
    }
    return removed;
  }

  /** Resolves once the writes started so far have finished (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  async close(): Promise<void> {
    await this.settled();
    await this.connection.close();
  }

  private unavailable(err: unknown): void {
    this.stats.unavailable++;
    this.skipUntil = performance.now() + BACK_OFF_MS;
    this.connection.failed(err);
  }

  private background(work: Promise<void>): Promise<void> {
    const run = work.catch((err: unknown) => this.unavailable(err));
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return run;
  }
}
