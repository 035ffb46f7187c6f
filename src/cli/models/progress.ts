/**
 * @module cli/models/progress
 * A download's status line: a bar, megabytes done of total and the rate,
 * redrawn in place on stderr at most ten times a second. Off unless stderr is
 * a terminal (or `--progress` asks for it), so pipes and logs stay quiet.
 */

const mb = (bytes: number): string => (bytes / 1_000_000).toFixed(1);

export class ByteProgress {
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
