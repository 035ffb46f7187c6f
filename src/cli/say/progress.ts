/**
 * @module cli/say/progress
 * One status line on a terminal: a bar, characters done of total, elapsed
 * time and ETA, redrawn in place on stderr. Off when stderr is not a TTY, so
 * pipes and logs stay clean.
 */

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export class Progress {
  private readonly started = performance.now();
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly enabled = Boolean(process.stderr.isTTY),
  ) {
    this.draw();
  }

  advance(characters: number): void {
    this.done += characters;
    this.draw();
  }

  /** Clears the line, so whatever is printed next starts at its beginning. */
  end(): void {
    if (this.enabled) this.stream.write('\r\x1b[2K');
  }

  private draw(): void {
    if (!this.enabled) return;
    const fraction = this.total ? this.done / this.total : 1;
    const width = 24;
    const filled = Math.round(fraction * width);
    const elapsed = (performance.now() - this.started) / 1000;
    const eta = this.done ? (elapsed / this.done) * (this.total - this.done) : Infinity;
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const line = `${bar} ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} chars  ${clock(elapsed)} elapsed  ETA ${clock(eta)}`;
    this.stream.write(`\r\x1b[2K${line}`);
  }
}
