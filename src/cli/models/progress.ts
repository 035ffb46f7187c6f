/**
 * @module cli/models/progress
 * A download's progress, two ways: `ByteProgress`, a status line (a bar,
 * megabytes done of total and the rate) redrawn in place on stderr at most
 * ten times a second, off unless stderr is a terminal (or `--progress` asks
 * for it), so pipes stay quiet; and `LogProgress`, a log line every tenth of
 * the download (or every 10 s when the size is unknown), for a server that
 * pulls models as it starts.
 */
import type { Logger } from '../../log/logger.js';

/** What a download reports as it goes. */
export interface Progress {
  /** Sets the bytes done so far (a resumed download starts above zero) and the total, when known. */
  reset(done: number, total: number | undefined): void;
  advance(bytes: number): void;
  end(): void;
}

const mb = (bytes: number): string => (bytes / 1_000_000).toFixed(1);

export class ByteProgress implements Progress {
  private started = performance.now();
  private lastDraw = 0;
  private done = 0;

  constructor(
    private total: number | undefined,
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WritableStream = process.stderr,
  ) {}

  /** Sets the bytes done so far (a resumed download starts above zero) and the total, when known. */
  reset(done: number, total: number | undefined): void {
    this.done = done;
    this.total = total;
    this.started = performance.now();
    this.draw(true);
  }

  advance(bytes: number): void {
    this.done += bytes;
    this.draw(false);
  }

  end(): void {
    if (!this.enabled) return;
    this.draw(true);
    this.stream.write('\n');
  }

  private draw(force: boolean): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const width = 24;
    const fraction = this.total ? Math.min(1, this.done / this.total) : 0;
    const filled = Math.round(fraction * width);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const of = this.total ? `/${mb(this.total)}` : '';
    this.stream.write(`\r\x1b[2K${bar} ${mb(this.done)}${of} MB  ${mb(this.done / seconds)} MB/s`);
  }
}

export class LogProgress implements Progress {
  private done = 0;
  private total: number | undefined;
  private started = performance.now();
  private lastLog = 0;
  private lastStep = -1;

  constructor(
    private readonly logger: Logger,
    private readonly model: string,
  ) {}

  reset(done: number, total: number | undefined): void {
    this.done = done;
    this.total = total;
    this.started = performance.now();
    this.lastStep = this.step();
    this.log(done > 0 ? 'resuming model download' : 'downloading model');
  }

  advance(bytes: number): void {
    this.done += bytes;
    const step = this.step();
    const now = performance.now();
    if (this.total ? step > this.lastStep : now - this.lastLog >= 10_000) {
      this.lastStep = step;
      this.log('downloading model');
    }
  }

  end(): void {
    this.log('model downloaded');
  }

  private step(): number {
    return this.total ? Math.floor((10 * this.done) / this.total) : 0;
  }

  private log(message: string): void {
    this.lastLog = performance.now();
    const seconds = Math.max(0.001, (this.lastLog - this.started) / 1000);
    this.logger.info(
      {
        model: this.model,
        doneMB: Number(mb(this.done)),
        totalMB: this.total ? Number(mb(this.total)) : undefined,
        percent: this.total ? Math.min(100, Math.floor((100 * this.done) / this.total)) : undefined,
        MBps: Number(mb(this.done / seconds)),
      },
      message,
    );
  }
}
