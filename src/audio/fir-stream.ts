/**
 * @module audio/fir-stream — what the FIR resamplers (audio/polyphase, audio/halfband) share:
 * the input kept for the filter's taps, the implicit silence before and after the stream, and
 * the process / flush / destroy life of a `Resampler`. A subclass says which outputs its
 * buffered input completes (`run`) and how long its filter reaches on each side.
 *
 * The whole state of a stream is a few numbers and the last filter's length of input
 * (`FirState`, plain data that crosses threads by structured clone), so a stream can be
 * continued elsewhere: an engine's worker thread resamples one sentence and hands the state
 * back for the next one, wherever that one runs (audio/output-stage).
 */
import type { Resampler } from './resampling.js';

/** Where a FIR stream stands: enough to continue it, on any thread, with the same output. */
export interface FirState {
  inputRate: number;
  outputRate: number;
  buf: Float32Array;
  bufStart: number;
  totalIn: number;
  /** The subclass's position: the next output (polyphase) or the next output pair (half-band). */
  next: number;
}

export abstract class FirStream implements Resampler {
  /** Input not yet fully used, starting at absolute input index `bufStart`. */
  protected buf: Float32Array;
  protected bufStart: number;
  /** The subclass's position in its output (see FirState.next). */
  protected next = 0;
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
    this.take(input);
    return this.run(Infinity);
  }

  flush(): Float32Array {
    const limit = this.close();
    return limit === null ? new Float32Array(0) : this.run(limit);
  }

  destroy(): void {
    this.destroyed = true;
  }

  /** This stream's state, copied: continuing from it (`resume`) gives the output this stream would. */
  snapshot(): FirState {
    this.live();
    if (this.flushed) throw new Error('resampler already flushed');
    return { inputRate: this.inputRate, outputRate: this.outputRate, buf: this.buf.slice(), bufStart: this.bufStart, totalIn: this.totalIn, next: this.next };
  }

  /** Continues the stream `state` describes (same rates; the state is copied, not kept). */
  resume(state: FirState): this {
    this.live();
    if (state.inputRate !== this.inputRate || state.outputRate !== this.outputRate) {
      throw new RangeError(`resampler state for ${state.inputRate} → ${state.outputRate} Hz, not ${this.inputRate} → ${this.outputRate}`);
    }
    this.buf = state.buf.slice();
    this.bufStart = state.bufStart;
    this.totalIn = state.totalIn;
    this.next = state.next;
    this.flushed = false;
    return this;
  }

  /** Makes every output the buffer completes, up to `limit` (in the subclass's own count). */
  protected abstract run(limit: number): Float32Array;

  /** The `run` limit that ends a stream of `totalIn` input samples. */
  protected abstract flushLimit(totalIn: number): number;

  /** Takes `input` into the buffer: what `process` does before it runs the filter. */
  protected take(input: Float32Array): void {
    this.live();
    if (this.flushed) throw new Error('resampler already flushed');
    this.totalIn += input.length;
    this.append(input);
  }

  /** Appends the closing silence and returns the `run` limit that ends the stream; null once ended. */
  protected close(): number | null {
    this.live();
    if (this.flushed) return null;
    this.flushed = true;
    this.append(new Float32Array(this.after));
    return this.flushLimit(this.totalIn);
  }

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
