/**
 * @module store/sqlite/wal-sync
 * Makes committed SQLite writes durable. The connection commits with
 * `synchronous = NORMAL`: in WAL mode a commit is then visible to every
 * connection and survives the process, but not a power cut until the WAL
 * reaches the disk. `sync()` gets it there with an `fdatasync` of the WAL
 * file. One flush runs at a time; it covers every commit made before it began,
 * so the writes that ask while it runs share the next one: the cost of a flush
 * is paid per batch of writes, not per write (two or four flushes at once
 * measured no better). A write that must outlive a power cut (a charge, a
 * credit, a new key) is reported done only once a flush that began after its
 * commit ends.
 *
 * Where the flush runs depends on the disk. On a disk that flushes in well
 * under a millisecond, waking a thread-pool thread costs the event loop more
 * than the flush blocks it (a VM's 0.15 ms flush against a 16–78 µs hand-off,
 * docs/benchmarks-history.md), so such flushes run on the event loop, where each is timed.
 * Once they take longer on average (a lone slow one, such as the WAL's first
 * growth, does not count for much), flushes go to libuv's thread pool, and
 * now and then one runs on the loop again to time the disk: after a second,
 * then twice as long after each slow one, up to a minute.
 */
import { close, fdatasync, fdatasyncSync, openSync } from 'node:fs';

/** Flushes a file descriptor to disk, calling back when done (`fs.fdatasync`). */
export type Flush = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export interface WalSyncOptions {
  /** A flush on the thread pool (`fs.fdatasync`). Given without `flushNow`, every flush uses it (tests hold or fail it). */
  flush?: Flush;
  /** A flush on this thread (`fs.fdatasyncSync`), for a disk fast enough. */
  flushNow?: (fd: number) => void;
  /** A clock in milliseconds, to time flushes (`performance.now`). */
  now?: () => number;
}

/** Flushes that take at most this long on average run on the event loop. */
export const INLINE_FLUSH_MS = 2;
/** Weight of the newest flush in the average. */
const SMOOTHING = 0.1;
/** A flush counts for at most this long in the average, so one outlier moves it by 0.8 ms at most. */
const COUNTED_MAX_MS = 4 * INLINE_FLUSH_MS;
/** While flushes run on the thread pool, the first flush this long after the move times the disk on the loop. */
export const FIRST_PROBE_MS = 1000;
/** The longest wait between two such probes (each slow one doubles it). */
export const LAST_PROBE_MS = 64_000;

export class WalSync {
  /** Flushes finished so far (for tests and diagnostics). */
  flushes = 0;
  private fd: number | null = null;
  private running = false;
  /** The flush that starts when the running one ends: it covers every commit made meanwhile. */
  private queued: { promise: Promise<void>; start: () => void } | null = null;
  private idle: (() => void) | null = null;
  private closed = false;
  private readonly flush: Flush;
  private readonly flushNow: ((fd: number) => void) | null;
  private readonly now: () => number;
  /** Whether flushes run on the event loop; the first one does, and is timed. */
  private inline: boolean;
  /** Average time of the flushes timed on the event loop, in ms. */
  private averageMs: number | null = null;
  /** While flushes run on the thread pool: when one on the loop next times the disk, and the wait after that. */
  private probeAt = 0;
  private probeWaitMs = FIRST_PROBE_MS;

  /** `walPath` is the database file's path + `-wal`; null for a database with no WAL file (`:memory:`). */
  constructor(
    private readonly walPath: string | null,
    options: WalSyncOptions = {},
  ) {
    this.flush = options.flush ?? fdatasync;
    this.flushNow = options.flushNow ?? (options.flush ? null : fdatasyncSync);
    this.now = options.now ?? (() => performance.now());
    this.inline = this.flushNow !== null;
  }

  /** Where flushes run now (for tests and diagnostics). */
  get mode(): 'event loop' | 'thread pool' {
    return this.inline ? 'event loop' : 'thread pool';
  }

  /** Average time of the flushes timed on the event loop (ms, each counted up to 4 × INLINE_FLUSH_MS); null before the first. */
  get averageFlushMs(): number | null {
    return this.averageMs;
  }

  /** Resolves once everything committed before this call is on disk. */
  sync(): Promise<void> {
    if (this.walPath === null) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (!this.running) return this.start();
    // The running flush may have begun before the caller's commit, so it does not count: wait for the next one.
    if (!this.queued) {
      let start!: () => void;
      const promise = new Promise<void>((resolve, reject) => {
        start = () => this.start().then(resolve, reject);
      });
      this.queued = { promise, start };
    }
    return this.queued.promise;
  }

  /** Waits for the flushes in progress, then releases the file. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.running || this.queued) await new Promise<void>((resolve) => (this.idle = resolve));
    if (this.fd !== null) close(this.fd, () => {});
    this.fd = null;
  }

  private start(): Promise<void> {
    this.running = true;
    return new Promise<void>((resolve, reject) => {
      let fd: number;
      try {
        // Opened once the WAL exists (after the first commit) and kept open: reading is enough to flush a file on Linux.
        fd = this.fd ??= openSync(this.walPath as string, 'r');
      } catch (err) {
        this.finished();
        reject(err);
        return;
      }
      const done = (err: NodeJS.ErrnoException | null) => {
        if (!err) this.flushes++;
        this.finished();
        if (err) reject(err);
        else resolve();
      };
      if (!this.onLoop()) {
        this.flush(fd, done);
        return;
      }
      const started = this.now();
      try {
        this.flushNow!(fd);
      } catch (err) {
        done(err as NodeJS.ErrnoException);
        return;
      }
      this.timed(this.now() - started);
      done(null);
    });
  }

  /** Whether this flush runs on the event loop: while the disk is fast, or to time it again. */
  private onLoop(): boolean {
    if (this.flushNow === null) return false;
    return this.inline || this.now() >= this.probeAt;
  }

  private timed(ms: number): void {
    const counted = Math.min(ms, COUNTED_MAX_MS);
    if (this.inline && this.averageMs !== null) {
      this.averageMs += (counted - this.averageMs) * SMOOTHING;
    } else {
      // The first flush, or a probe: the thread pool's flushes were not timed (their hand-off would count).
      this.averageMs = counted;
      if (!this.inline) this.probeWaitMs = counted <= INLINE_FLUSH_MS ? FIRST_PROBE_MS : Math.min(2 * this.probeWaitMs, LAST_PROBE_MS);
    }
    this.inline = this.averageMs <= INLINE_FLUSH_MS;
    // The wait is back at FIRST_PROBE_MS whenever flushes are on the loop (only a fast probe brings them back).
    if (!this.inline) this.probeAt = this.now() + this.probeWaitMs;
  }

  private finished(): void {
    this.running = false;
    const next = this.queued;
    if (next) {
      this.queued = null;
      next.start();
    } else if (this.idle) this.idle();
  }
}
