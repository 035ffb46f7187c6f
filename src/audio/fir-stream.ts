/**
 * @module audio/fir-stream — what the FIR resamplers (audio/polyphase, audio/halfband) share:
 * the input kept for the filter's taps, the implicit silence before and after the stream, and
 * the process / flush / destroy life of a `Resampler`. A subclass says which outputs its
 * buffered input completes (`run`) and how long its filter reaches on each side.
 */
import type { Resampler } from './resampler.js';

export abstract class FirStream implements Resampler {
  /** Input not yet fully used, starting at absolute input index `bufStart`. */
  protected buf: Float32Array;
  protected bufStart: number;
  private totalIn = 0;
  private flushed = false;
  private destroyed = false;

  /** `before`: zeros the first outputs see to their left; `after`: zeros flush() appends for the last. */
  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
    before: number,
    private readonly after: number,
  ) {
    this.buf = new Float32Array(before);
    this.bufStart = -before;
  }

  process(input: Float32Array): Float32Array {
    this.live();
    if (this.flushed) throw new Error('resampler already flushed');
    this.totalIn += input.length;
    this.append(input);
    return this.run(Infinity);
  }

  flush(): Float32Array {
    this.live();
    if (this.flushed) return new Float32Array(0);
    this.flushed = true;
    this.append(new Float32Array(this.after));
    return this.run(this.flushLimit(this.totalIn));
  }

  destroy(): void {
    this.destroyed = true;
  }

  /** Makes every output the buffer completes, up to `limit` (in the subclass's own count). */
  protected abstract run(limit: number): Float32Array;

  /** The `run` limit that ends a stream of `totalIn` input samples. */
  protected abstract flushLimit(totalIn: number): number;

  /** Forgets input before absolute index `from`, which no later output reads. */
  protected keepFrom(from: number): void {
    if (from <= this.bufStart) return;
    this.buf = this.buf.slice(Math.min(this.buf.length, from - this.bufStart));
    this.bufStart = from;
  }

  private live(): void {
    if (this.destroyed) throw new Error('resampler destroyed');
  }

  private append(input: Float32Array): void {
    if (input.length === 0) return;
    const joined = new Float32Array(this.buf.length + input.length);
    joined.set(this.buf);
    joined.set(input, this.buf.length);
    this.buf = joined;
  }
}
