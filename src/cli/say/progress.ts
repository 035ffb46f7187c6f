/**
 * @module cli/say/progress
 * One status line on a terminal: a bar, work done of total (characters, or a
 * job's segments with the audio made so far), elapsed time and ETA, redrawn
 * in place on stderr. Off when stderr is not a TTY, so pipes and logs stay
 * clean.
 */

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export class Progress {
  private readonly started = performance.now();
  private done = 0;
  /** What was done before this line started (a resumed job's segments): not counted into the ETA's rate. */
  private baseline: number | null = null;
  private note = '';

  constructor(
    private total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly enabled = Boolean(process.stderr.isTTY),
    private readonly unit = 'chars',
  ) {
    this.draw();
  }

  advance(characters: number): void {
    this.done += characters;
    this.draw();
  }

  /** Sets the counts outright (a job as the server reports it), with a note shown after them. */
  update(done: number, total: number, note = ''): void {
    this.baseline ??= done;
    this.done = done;
    this.total = total;
    this.note = note;
    this.draw();
  }

  /** Clears the line, so whatever is printed next starts at its beginning. */
  end(): void {
    if (this.enabled) this.stream.write('\r\x1b[2K');
  }

  private draw(): void {
    if (!this.enabled) return;
    const fraction = this.total ? Math.min(1, this.done / this.total) : 1;
    const width = 24;
    const filled = Math.round(fraction * width);
    const elapsed = (performance.now() - this.started) / 1000;
    const made = this.done - (this.baseline ?? 0);
    const eta = made > 0 ? (elapsed / made) * (this.total - this.done) : Infinity;
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const note = this.note ? `, ${this.note}` : '';
    const line = `${bar} ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${this.unit}${note}  ${clock(elapsed)} elapsed  ETA ${clock(eta)}`;
    this.stream.write(`\r\x1b[2K${line}`);
  }
}
