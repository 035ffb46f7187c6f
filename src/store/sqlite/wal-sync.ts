/**
 * @module store/sqlite/wal-sync
 * Makes committed SQLite writes durable without blocking the event loop. The
 * connection commits with `synchronous = NORMAL`: in WAL mode a commit is then
 * visible to every connection and survives the process, but not a power cut
 * until the WAL reaches the disk. `sync()` gets it there with an `fdatasync`
 * of the WAL file on libuv's thread pool. One flush runs at a time; it covers
 * every commit made before it began, so the writes that ask while it runs
 * share the next one: the cost of a flush is paid per batch of writes, not
 * per write (two or four flushes at once measured no better). A write that must outlive a power cut (a charge, a credit, a new
 * key) is reported done only once a flush that began after its commit ends.
 */
import { close, fdatasync, openSync } from 'node:fs';

/** Flushes a file descriptor to disk, calling back when done (`fs.fdatasync`). */
export type Flush = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export class WalSync {
  /** Flushes finished so far (for tests and diagnostics). */
  flushes = 0;
  private fd: number | null = null;
  private running = false;
  /** The flush that starts when the running one ends: it covers every commit made meanwhile. */
  private queued: { promise: Promise<void>; start: () => void } | null = null;
  private idle: (() => void) | null = null;
  private closed = false;

  /**
   * `walPath` is the database file's path + `-wal`; null for a database with no WAL file (`:memory:`).
   * `flush` is replaced in tests to hold a flush or fail it.
   */
  constructor(
    private readonly walPath: string | null,
    private readonly flush: Flush = fdatasync,
  ) {}

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
      this.flush(fd, (err) => {
        if (!err) this.flushes++;
        this.finished();
        if (err) reject(err);
        else resolve();
      });
    });
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
