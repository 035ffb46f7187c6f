/**
 * @module cache/memory-tier
 * The audio cache's first tier: entries in memory, least recently used out
 * first, within a cap on their bytes.
 */
import type { CachedAudio } from './entry.js';

export class MemoryTier {
  /** Insertion order is recency: a hit moves to the end; the first entry goes first. */
  private readonly entries = new Map<string, CachedAudio>();
  bytes = 0;
  evictions = 0;

  constructor(readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(id: string): CachedAudio | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  /** Keeps the entry, evicting the least recently used ones to fit; an entry over the whole cap is not kept. */
  set(id: string, entry: CachedAudio): void {
    this.delete(id);
    if (entry.size > this.maxBytes) return;
    while (this.bytes + entry.size > this.maxBytes) {
      const [oldest] = this.entries.keys();
      this.delete(oldest);
      this.evictions++;
    }
    this.entries.set(id, entry);
    this.bytes += entry.size;
  }

  delete(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    this.bytes -= entry.size;
    return true;
  }

  /** Removes every entry whose id the predicate picks; returns their ids. */
  purge(pick: (id: string) => boolean): string[] {
    const removed = [...this.entries.keys()].filter(pick);
    for (const id of removed) this.delete(id);
    return removed;
  }
}
