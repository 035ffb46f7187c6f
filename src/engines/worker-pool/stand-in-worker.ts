/**
 * @module engines/worker-pool/stand-in-worker
 * A stand-in engine for the pool's own tests (`pool.test.ts`): it blocks its
 * thread the way a real engine does, on a schedule the test chooses, so
 * deadlines, cancellation, a worker that ignores cancel, and failures can be
 * shown without a speech engine's timing.
 */
import { engineWorkerData, serveJobs } from './serve.js';

export interface TestJob {
  /** Chunks to make; chunk i holds `samples` copies of i. */
  chunks: number;
  samples: number;
  /** Blocks this long before each chunk, as an engine computing it would. */
  blockMs?: number;
  /** Never looks at the cancel flag (an engine stuck in native code). */
  ignoreCancel?: boolean;
  /** Throws after this many chunks. */
  failAfter?: number;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function block(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

serveJobs<TestJob, Int16Array, number, { started: string }>({ started: engineWorkerData<string>() }, (job, output) => {
  for (let i = 0; i < job.chunks; i++) {
    if (!job.ignoreCancel && output.cancelled()) return;
    if (job.failAfter !== undefined && i >= job.failAfter) throw new Error('the test engine failed');
    block(job.blockMs ?? 0);
    output.push(new Int16Array(job.samples).fill(i), [i]);
  }
});
