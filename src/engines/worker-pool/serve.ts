/**
 * @module engines/worker-pool/serve
 * The worker-thread half of the pool, for engine worker scripts: it receives
 * jobs, and gives the engine's callback one `JobOutput` per job that posts
 * audio the way the pool expects. A request's first audio goes out alone (first
 * audio is not delayed); after it, and from the start of a continuation, up to
 * `BATCH` engine chunks are gathered per message, so the main thread handles a fraction of the messages. After
 * each message it blocks while the consumer is `highWater` chunks behind,
 * and it reads the cancel flag, both from the shared control block, because
 * an engine that blocks its thread never sees a message mid-job. A job that
 * comes with an output stage has each chunk resampled and encoded here, on
 * the worker's core, and the stage's state goes back with the job's end.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { OutputStage } from '../../audio/output-stage.js';
import { CONTROL, type JobEnvelope, type PoolWorkerData, type PoolWorkerMessage, type Samples } from './protocol.js';

/** Engine chunks gathered into one message once the first audio has gone out alone. */
export const BATCH = 5;

/** How long one wait for the consumer lasts before the flags are read again. */
const WAIT_SLICE_MS = 1000;

export interface JobOutput<S extends Samples, E> {
  /** Whether the pool cancelled this job; the engine should stop as soon as it sees true. */
  cancelled(): boolean;
  /**
   * One engine chunk (the worker hands `samples` over; it is transferred, so pass an array the
   * engine will not reuse) and the events that came with it. May block while the consumer is
   * behind; returns at once when the job is cancelled.
   */
  push(samples: S, events?: E[]): void;
}

/** Start-up data the pool passed for this engine (see `WorkerPoolOptions.workerData`). */
export function engineWorkerData<T>(): T {
  return (workerData as PoolWorkerData).engine as T;
}

export interface ServeOptions {
  /**
   * Engine chunks gathered per message after the first (default `BATCH`). An engine whose chunks
   * are already large (a neural engine's whole sentences) passes 1, so each goes out as it is made.
   */
  batch?: number;
}

/**
 * Reports the worker ready with `info`, then runs each job the pool sends through `run`, and
 * reports its end (or failure). Call once, after the engine has loaded and warmed up.
 */
export function serveJobs<J, S extends Samples, E, R>(
  info: R,
  run: (job: J, output: JobOutput<S, E>) => void | Promise<void>,
  options: ServeOptions = {},
): void {
  const port = parentPort;
  if (!port) throw new Error('serveJobs runs in a worker thread');
  const control = new Int32Array((workerData as PoolWorkerData).control);
  const cancelled = () => Atomics.load(control, CONTROL.cancel) !== 0;
  const post = (message: PoolWorkerMessage<R, E, S>, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

  port.on('message', async (envelope: JobEnvelope<J>) => {
    const batcher = new Batcher<S, E>(envelope, control, cancelled, post, options.batch ?? BATCH);
    try {
      const staged = envelope.stage;
      const stage = staged ? new OutputStage(staged.spec, staged.state) : null;
      const push = stage
        ? (samples: S, events?: E[]) => {
            if (!cancelled()) batcher.push(asBytes(stage.encode(samples as Int16Array | Float32Array, staged!.gain)) as S, events, samples.length);
          }
        : (samples: S, events?: E[]) => batcher.push(samples, events, samples.length);
      await run(envelope.job, { cancelled, push });
      if (!cancelled()) batcher.flush();
      post({ type: 'end', jobId: envelope.jobId, cancelled: cancelled(), ...(stage && !cancelled() ? { stage: stage.state() } : {}) });
    } catch (err) {
      post({ type: 'failed', jobId: envelope.jobId, message: err instanceof Error ? err.message : String(err) });
    }
  });
  post({ type: 'ready', info });
}

/** A stage's Buffer as a plain Uint8Array: a posted Buffer arrives as one anyway, and batches join them. */
function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** Audio and events gathered since the last message of one job. */
class Batcher<S extends Samples, E> {
  private parts: S[] = [];
  private length = 0;
  private events: E[] = [];
  /** Engine chunks gathered: the unit the pool's high-water mark counts. */
  private units = 0;
  /** Samples the engine made for what is gathered. */
  private made = 0;
  /** Whether the chunk that must go out alone (the request's first audio) has gone. */
  private audioSent: boolean;
  private readonly batch: number;

  constructor(
    private readonly envelope: JobEnvelope<unknown>,
    private readonly control: Int32Array,
    private readonly cancelled: () => boolean,
    private readonly post: (message: PoolWorkerMessage<never, E, S>, transfer: ArrayBuffer[]) => void,
    batch: number,
  ) {
    // A batch never holds more than half the high-water mark, so the pause point still means what it says.
    this.batch = Math.max(1, Math.min(batch, Math.floor(envelope.highWater / 2)));
    // A continuation's listener is still hearing the piece before.
    this.audioSent = envelope.continuation;
  }

  /** `made`: the engine's samples behind `samples` (their own count unless a stage encoded them). */
  push(samples: S, events: E[] = [], made = samples.length): void {
    if (this.cancelled()) return;
    if (made === 0 && samples.length === 0 && events.length === 0) return;
    if (samples.length > 0) this.parts.push(samples);
    this.length += samples.length;
    this.made += made;
    this.events.push(...events);
    this.units++;
    if (!this.audioSent || this.units >= this.batch) this.send();
  }

  flush(): void {
    if (this.units > 0) this.send();
  }

  private send(): void {
    const samples = this.take();
    this.audioSent ||= samples.length > 0; // read before the transfer detaches it
    const { units, events, made } = this;
    this.units = this.made = 0;
    this.events = [];
    Atomics.add(this.control, CONTROL.inFlight, units);
    this.post({ type: 'chunk', jobId: this.envelope.jobId, samples, events, units, made }, [samples.buffer as ArrayBuffer]);
    this.awaitConsumer();
  }

  /** The gathered parts as one array (the only part itself when there is one). */
  private take(): S {
    const parts = this.parts;
    this.parts = [];
    const length = this.length;
    this.length = 0;
    if (parts.length === 1) {
      const only = parts[0];
      // A view into a larger buffer is copied: transferring would take the rest of that buffer too.
      return only.byteOffset === 0 && only.byteLength === only.buffer.byteLength ? only : (only.slice() as S);
    }
    const Kind = (parts[0]?.constructor ?? Int16Array) as new (length: number) => S;
    const joined = new Kind(length);
    let at = 0;
    for (const part of parts) {
      joined.set(part as never, at);
      at += part.length;
    }
    return joined;
  }

  /** Blocks while the consumer holds `highWater` unread chunks, unless cancelled. */
  private awaitConsumer(): void {
    try {
      for (;;) {
        const inFlight = Atomics.load(this.control, CONTROL.inFlight);
        if (inFlight < this.envelope.highWater || this.cancelled()) return;
        Atomics.store(this.control, CONTROL.waiting, 1);
        Atomics.wait(this.control, CONTROL.inFlight, inFlight, WAIT_SLICE_MS);
      }
    } finally {
      Atomics.store(this.control, CONTROL.waiting, 0);
    }
  }
}
