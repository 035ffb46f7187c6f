/**
 * @module cache/audio-cache
 * The audio cache: entries by key (`key.ts`) in a memory tier, then a disk
 * tier on blob storage, then (with Redis) a tier shared by every server
 * (`shared-tier.ts`), and the flights of syntheses in progress (single
 * flight, `flight.ts`). What the session asks of it:
 * - `lookup(id)`: a stored entry (memory first; a disk or shared hit is
 *   brought back into memory), or null; `peek(id)`, the memory tier alone,
 *   answers without a promise (the hit path awaits nothing);
 * - `flight(id, source)`: the synthesis in flight for this id, or a new one
 *   started from `source`; a flight that completes is stored in every tier,
 *   one that fails or is abandoned stores nothing.
 *
 * An entry's id is `audio/<scope>/<voice>/<key>` (scope and voice base64url
 * encoded), so a purge by organisation or voice needs no entry read.
 */
import type { Logger } from '../log/logger.js';
import type { BlobStorage } from './blob-storage.js';
import { DiskTier } from './disk-tier.js';
import { makeEntry, type CachedAudio } from './entry.js';
import { Flight, type FlightPiece } from './flight.js';
import { MemoryTier } from './memory-tier.js';
import type { SharedTier, SharedTierStats } from './shared-tier.js';

export interface AudioCacheOptions {
  memoryBytes: number;
  /** 0: no disk tier. */
  diskBytes: number;
  /** A response whose entry would be larger is served but not kept. */
  maxEntryBytes: number;
  /** Where the disk tier keeps its blobs; null: no disk tier. */
  blobs: BlobStorage | null;
  /** The tier shared with other servers (Redis); null: none. */
  shared?: SharedTier | null;
  logger?: Logger;
}

export interface CacheStats {
  hits: number;
  misses: number;
  followers: number;
  /** Lookups answered by each tier. */
  tierHits: { memory: number; disk: number; shared: number };
  memory: { entries: number; bytes: number; evictions: number };
  disk: { entries: number; bytes: number; evictions: number; corrupt: number } | null;
  shared: SharedTierStats | null;
}

export interface PurgeScope {
  /** An organisation's entries (its scope); absent with no voice: everything. */
  orgId?: string;
  voiceId?: string;
}

const ROOT = 'audio';

const part = (value: string) => Buffer.from(value, 'utf8').toString('base64url') || '-';

/** The id of the entry for `key` made in `scope` (an organisation id or `shared`) with voice `voiceId`. */
export function entryId(scope: string, voiceId: string, key: string): string {
  return `${ROOT}/${part(scope)}/${part(voiceId)}/${key}`;
}

export class AudioCache {
  readonly memory: MemoryTier;
  readonly disk: DiskTier | null;
  readonly shared: SharedTier | null;
  private readonly flights = new Map<string, Flight>();
  hits = 0;
  misses = 0;
  followers = 0;
  private readonly tierHits = { memory: 0, disk: 0, shared: 0 };

  constructor(private readonly options: AudioCacheOptions) {
    this.memory = new MemoryTier(options.memoryBytes);
    this.disk = options.blobs && options.diskBytes > 0 ? new DiskTier(options.blobs, options.diskBytes, options.logger ?? null) : null;
    this.shared = options.shared ?? null;
  }

  /** Reads the disk tier's index (entries kept across a restart) and waits for the shared tier's first connection attempt. */
  async open(): Promise<void> {
    await Promise.all([this.disk?.open(ROOT), this.shared?.open()]);
  }

  /** The entry when this server holds it in memory (counted as a memory-tier hit), without waiting; else null. */
  peek(id: string): CachedAudio | null {
    const inMemory = this.memory.get(id);
    if (inMemory) this.tierHits.memory++;
    return inMemory;
  }

  async lookup(id: string): Promise<CachedAudio | null> {
    const inMemory = this.peek(id);
    if (inMemory) return inMemory;
    const onDisk = (await this.disk?.get(id)) ?? null;
    if (onDisk) {
      this.tierHits.disk++;
      this.memory.set(id, onDisk);
      return onDisk;
    }
    const shared = (await this.shared?.get(id)) ?? null;
    if (shared) {
      this.tierHits.shared++;
      this.memory.set(id, shared);
    }
    return shared;
  }

  /** The flight in progress for `id` (`leader: false`), or a new one made from `source` (`leader: true`). */
  flight(id: string, source: (signal: AbortSignal) => AsyncIterable<FlightPiece>): { flight: Flight; leader: boolean } {
    const running = this.flights.get(id);
    if (running?.joinable) return { flight: running, leader: false };
    const flight = new Flight(source, this.options.maxEntryBytes);
    this.flights.set(id, flight);
    void flight.completed.then((completed) => {
      const pieces = flight.recorded();
      if (completed && pieces) this.keep(id, pieces);
      if (this.flights.get(id) === flight) this.flights.delete(id);
    });
    return { flight, leader: true };
  }

  /** Syntheses in flight now. */
  get inFlight(): number {
    return this.flights.size;
  }

  /** Stores a completed synthesis in every tier (the disk and shared writes in the background). */
  keep(id: string, pieces: readonly FlightPiece[]): void {
    const entry = makeEntry(pieces);
    if (entry.size > this.options.maxEntryBytes) return;
    this.memory.set(id, entry);
    void this.disk?.put(id, entry);
    void this.shared?.put(id, entry);
  }

  /**
   * Removes the entries of an organisation, of a voice (in every scope, or in the organisation's), or
   * all, from this server's tiers and the shared one (`local`: this server's only, as another server's
   * purge reaches it); returns how many ids were removed. Rejects when the shared tier cannot be
   * reached (after purging this server's tiers): a retry finishes it.
   */
  async purge(scope: PurgeScope = {}, options: { local?: boolean } = {}): Promise<number> {
    const org = scope.orgId !== undefined ? part(scope.orgId) : null;
    const voice = scope.voiceId !== undefined ? part(scope.voiceId) : null;
    const pick = (id: string) => {
      const [, s, v] = id.split('/');
      return (org === null || s === org) && (voice === null || v === voice);
    };
    // A synthesis still running for a purged id is heard by its followers but not kept.
    for (const [id, flight] of this.flights) if (pick(id)) flight.discard();
    const removed = new Set([...this.memory.purge(pick), ...((await this.disk?.purge(pick)) ?? [])]);
    // Parts are base64url (no glob characters) and an id has exactly four parts, so `*` never spans two.
    if (this.shared && !options.local) for (const id of await this.shared.purge(`${ROOT}/${org ?? '*'}/${voice ?? '*'}/*`)) removed.add(id);
    return removed.size;
  }

  stats(): CacheStats {
    const { memory, disk } = this;
    return {
      hits: this.hits,
      misses: this.misses,
      followers: this.followers,
      tierHits: { ...this.tierHits },
      memory: { entries: memory.size, bytes: memory.bytes, evictions: memory.evictions },
      disk: disk ? { entries: disk.size, bytes: disk.bytes, evictions: disk.evictions, corrupt: disk.corrupt } : null,
      shared: this.shared ? { ...this.shared.stats } : null,
    };
  }

  /** Resolves once the disk and shared tiers' pending writes have run. */
  async settled(): Promise<void> {
    await Promise.all([this.disk?.settled(), this.shared?.settled()]);
  }

  /** Finishes pending writes and closes the shared tier's connection. */
  async close(): Promise<void> {
    await this.disk?.settled();
    await this.shared?.close();
  }
}
