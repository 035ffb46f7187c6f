/**
 * @module cache/flight
 * Single flight: one synthesis whose pieces every identical request in
 * flight follows. The first request starts it; the synthesis runs on the
 * flight's own signal, not on any one client's, so a leader whose client
 * leaves does not stop it for the others. Each follower reads the pieces
 * recorded so far and then each new one as it is made. The producer waits
 * while the slowest follower is more than `HIGH_WATER` pieces behind, so a
 * slow reader still pauses the engine. When the last follower leaves before
 * the end, the flight is aborted (the engine job stops) and nothing is kept.
 * A flight whose audio grows past what an entry may hold (`maxBytes`) can no
 * longer be kept or joined: it stops taking followers, and the pieces every
 * follower has read are let go, so a long synthesis is not held in memory.
 */
import type { CachedPiece } from './entry.js';

/** A piece as the pipeline hands it on, with the time it took to make. */
export interface FlightPiece extends CachedPiece {
  stepTime: number;
}

const HIGH_WATER = 4;

interface Follower {
  at: number;
}

export class Flight {
  /** The pieces from the `dropped`-th on (all of them, unless the flight grew too large to keep). */
  private readonly pieces: FlightPiece[] = [];
  private dropped = 0;
  private bytes = 0;
  /** Grew past `maxBytes`: it will not be kept, and no new follower may join. */
  oversize = false;
  private readonly controller = new AbortController();
  private readonly followers = new Set<Follower>();
  private finished = false;
  private failure: { error: unknown } | null = null;
  private waiters: (() => void)[] = [];
  /** Resolves when the synthesis ended: true when it completed, false when it failed or was abandoned. */
  readonly completed: Promise<boolean>;

  constructor(
    source: (signal: AbortSignal) => AsyncIterable<FlightPiece>,
    private readonly maxBytes = Infinity,
  ) {
    this.completed = this.run(source);
  }

  /** Purged while it ran: its followers still hear it, but it is not kept and no one new joins. */
  private discarded = false;

  /** Every piece, once the synthesis completed and was not too large or purged (what the cache keeps). */
  recorded(): FlightPiece[] | null {
    return this.oversize || this.discarded ? null : this.pieces;
  }

  /** Whether a new follower may still join (it would read from the first piece). */
  get joinable(): boolean {
    return !this.oversize && !this.discarded && !this.signal.aborted;
  }

  /** A purge reached it while it ran: what it makes is not kept. */
  discard(): void {
    this.discarded = true;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Followers reading now. */
  get following(): number {
    return this.followers.size;
  }

  /** Every piece of the synthesis, from its first; throws its error; stops (and leaves) when `signal` aborts. */
  async *follow(signal: AbortSignal): AsyncGenerator<FlightPiece> {
    const me: Follower = { at: 0 };
    this.followers.add(me);
    const wake = () => this.wake();
    signal.addEventListener('abort', wake, { once: true });
    try {
      for (;;) {
        signal.throwIfAborted();
        if (me.at < this.dropped + this.pieces.length) {
          const piece = this.pieces[me.at++ - this.dropped];
          this.wake();
          yield piece;
          continue;
        }
        if (this.failure) throw this.failure.error;
        if (this.finished) return;
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
    } finally {
      signal.removeEventListener('abort', wake);
      this.followers.delete(me);
      // Nobody is left to hear it: the engine stops and nothing is kept.
      if (this.followers.size === 0 && !this.finished && !this.failure) this.controller.abort(new Error('every follower left'));
      this.wake();
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** The slowest follower is too far behind: wait for it (or for the flight's end). */
  private async slack(): Promise<void> {
    while (!this.signal.aborted) {
      let slowest = Infinity;
      for (const follower of this.followers) slowest = Math.min(slowest, follower.at);
      if (this.oversize) this.letGo(slowest);
      if (slowest === Infinity || this.dropped + this.pieces.length - slowest <= HIGH_WATER) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Drops the pieces every follower has read (only once the flight cannot be kept or joined). */
  private letGo(slowest: number): void {
    const upTo = Math.min(slowest === Infinity ? this.dropped + this.pieces.length : slowest, this.dropped + this.pieces.length);
    if (upTo <= this.dropped) return;
    this.pieces.splice(0, upTo - this.dropped);
    this.dropped = upTo;
  }

  private async run(source: (signal: AbortSignal) => AsyncIterable<FlightPiece>): Promise<boolean> {
    // Started after the leader's first read has begun following, so it is never alone-less at the start.
    await Promise.resolve();
    try {
      for await (const piece of source(this.signal)) {
        this.pieces.push(piece);
        this.bytes += piece.audio.length;
        if (this.bytes > this.maxBytes) this.oversize = true;
        this.wake();
        await this.slack();
        this.signal.throwIfAborted();
      }
      this.finished = true;
      return true;
    } catch (error) {
      this.failure = { error };
      return false;
    } finally {
      this.wake();
    }
  }
}
