/**
 * @module engines/worker-pool/pool.test
 * The pool's mechanics on a stand-in engine (`stand-in-worker.ts`): order and
 * batching, the bounded queue, both deadlines (and that a slow but steady
 * reader is not one of them), every way a consumer can leave, a worker that
 * ignores cancel, a failing job, a crashed worker, the counters, and output
 * stages run in the worker with their state carried from job to job.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { OutputStage, type StageSpec } from '../../audio/output-stage.js';
import { ApiError } from '../../errors/api-error.js';
import { createLogger } from '../../log/logger.js';
import { WorkerPool, type SubmitOptions, type WorkerPoolOptions } from './pool.js';
import type { ChunkDecoder } from './stream.js';
import type { TestJob } from './stand-in-worker.js';
import { until } from '../../../test/helpers/poll.js';

const WORKER_URL = new URL('./stand-in-worker.js', import.meta.url);

type Chunk = { samples: Int16Array; events: number[] };
type TestPool = WorkerPool<TestJob, Int16Array, number, { started: string }>;

const decoder = (): ChunkDecoder<Int16Array, number, Chunk> => ({ chunk: (samples, events) => ({ samples, events }) });

async function withPool(options: Partial<WorkerPoolOptions<{ started: string }>>, body: (pool: TestPool) => Promise<void>): Promise<void> {
  const pool: TestPool = new WorkerPool({
    name: 'test',
    workerUrl: WORKER_URL,
    workerData: 'yes',
    workers: 1,
    queueLimit: 4,
    highWater: 4,
    logger: createLogger('silent'),
    ...options,
  });
  await pool.start();
  try {
    await body(pool);
  } finally {
    await pool.stop();
  }
}

function submit(pool: TestPool, job: TestJob, signal = new AbortController().signal) {
  return pool.submit(job, signal, decoder());
}

async function drain(iterator: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of iterator) chunks.push(chunk);
  return chunks;
}

async function drainAll<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

/** Every test is bounded, so a pool that loses a job fails instead of hanging. */
const T = { timeout: 10_000 };

const isCode = (code: string) => (err: unknown) => err instanceof ApiError && err.code === code;

describe('worker pool', () => {
  test('delivers every chunk in order: the first alone (not a continuation\'s), later ones gathered; reports ready data and counts', T, async () => {
    let ready: unknown;
    await withPool({ highWater: 32, onReady: (info) => (ready = info) }, async (pool) => {
      assert.deepEqual(ready, { started: 'yes' }, 'the worker saw workerData and reported ready');
      const chunks = await drain(submit(pool, { chunks: 40, samples: 10 }));
      assert.equal(chunks[0].samples.length, 10, 'the first chunk goes out alone');
      assert.ok(chunks.length < 40, `${chunks.length} messages for 40 chunks`);
      const values = chunks.flatMap((c) => [...c.samples]);
      assert.equal(values.length, 400);
      assert.deepEqual(chunks.flatMap((c) => c.events), [...Array(40).keys()]);
      for (let i = 0; i < 40; i++) assert.ok(values.slice(i * 10, i * 10 + 10).every((v) => v === i));
      const next = await drain(pool.submit({ chunks: 40, samples: 10 }, new AbortController().signal, decoder(), { continuation: true }));
      assert.ok(next[0].samples.length > 10, "a continuation's first audio is gathered with the chunks after it");
      const stats = pool.stats();
      assert.deepEqual(stats.jobs, { submitted: 2, completed: 2, failed: 0, cancelled: 0, queueTimeouts: 0, jobTimeouts: 0, refused: 0 });
      assert.equal(stats.busy, 0);
      assert.equal(stats.workers, 1);
    });
  });

  test("a staged job's audio is encoded in the worker, and the next job continues its stage on another worker", T, async () => {
    await withPool({ workers: 2, highWater: 32 }, async (pool) => {
      // Chunk i is a step to level i: the filter rings at every step, so a lost state shows.
      const spec: StageSpec = { inputRate: 8000, outputRate: 16000, encoding: 'pcm_s16le' };
      const job: TestJob = { chunks: 12, samples: 37 };
      const bytes: ChunkDecoder<Int16Array, number, { bytes: Uint8Array; made: number }> = { chunk: (samples, _events, made) => ({ bytes: samples as unknown as Uint8Array, made }) };
      const gain = 900;
      const first = pool.submit(job, new AbortController().signal, bytes, { stage: { spec, gain: 1, state: new OutputStage(spec).state() } });
      const a = await drainAll(first);
      // Holds the first worker, so the second job runs on the other one.
      const hold = submit(pool, { chunks: 1, samples: 1, blockMs: 1500 });
      const second = pool.submit(job, new AbortController().signal, bytes, { stage: { spec, gain, state: first.stageState() } });
      const b = await drainAll(second);
      assert.equal(pool.stats().busy, 1, 'the second job ran while the first worker was still held');
      await hold.return();
      const got = Buffer.concat([...a, ...b].map((c) => c.bytes).concat(new OutputStage(spec, second.stageState()).flush()));
      assert.ok([...a, ...b].every((c) => c.bytes instanceof Uint8Array), 'bytes, not samples');
      assert.equal([...a, ...b].reduce((n, c) => n + c.made, 0), 2 * 12 * 37, "made counts the engine's samples");
      // One stage over both jobs' samples on this thread.
      const here = new OutputStage(spec);
      const parts: Buffer[] = [];
      for (const g of [1, gain]) for (let i = 0; i < 12; i++) parts.push(here.encode(new Int16Array(37).fill(i), g));
      parts.push(here.flush());
      assert.deepEqual(got, Buffer.concat(parts));
    });
  });

  test('a full queue refuses at once with engine_unavailable and Retry-After; a queued job runs once the worker is free', T, async () => {
    await withPool({ queueLimit: 1 }, async (pool) => {
      const busy = submit(pool, { chunks: 1000, samples: 100 });
      await busy.next();
      const queued = submit(pool, { chunks: 3, samples: 10 });
      assert.throws(() => submit(pool, { chunks: 1, samples: 1 }), (err: unknown) => isCode('engine_unavailable')(err) && (err as ApiError).headers['retry-after'] === '1');
      assert.equal(pool.stats().jobs.refused, 1);
      assert.equal(pool.stats().queued, 1);
      await busy.return();
      assert.equal((await drain(queued)).length, 2);
    });
  });

  test('a job that waits longer than queueTimeoutMs fails with engine_unavailable and leaves the queue', T, async () => {
    await withPool({ queueTimeoutMs: 150 }, async (pool) => {
      const busy = submit(pool, { chunks: 1000, samples: 100 });
      await busy.next(); // the only worker is held (paused for its reader)
      const waiting = submit(pool, { chunks: 1, samples: 1 });
      const started = performance.now();
      await assert.rejects(waiting.next(), (err: unknown) => isCode('engine_unavailable')(err) && (err as ApiError).headers['retry-after'] === '1');
      assert.ok(performance.now() - started < 2000);
      assert.equal(pool.stats().queued, 0);
      assert.equal(pool.stats().jobs.queueTimeouts, 1);
      await busy.return();
    });
  });

  test('a job that works longer than jobTimeoutMs fails with engine_timeout and its worker is freed', T, async () => {
    await withPool({ jobTimeoutMs: 200 }, async (pool) => {
      const slow = submit(pool, { chunks: 100, samples: 10, blockMs: 20 }); // 2 s of work
      await assert.rejects(drain(slow), (err: unknown) => isCode('engine_timeout')(err) && /within 0\.2 s$/.test((err as Error).message));
      await until(() => pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'the worker stopping' });
      assert.equal(pool.stats().jobs.jobTimeouts, 1);
      assert.equal((await drain(submit(pool, { chunks: 2, samples: 10 }))).length, 2);
    });
  });

  test('time paused for a slow but steady reader does not count against jobTimeoutMs', T, async () => {
    await withPool({ jobTimeoutMs: 600, highWater: 2 }, async (pool) => {
      const started = performance.now();
      let chunks = 0;
      for await (const _ of submit(pool, { chunks: 12, samples: 10 })) {
        chunks++;
        await sleep(100);
      }
      assert.equal(chunks, 12);
      assert.ok(performance.now() - started > 1000, 'the job outlasted its deadline in wall time');
    });
  });

  test('a reader that leaves a full buffer unread longer than jobTimeoutMs loses the job, and the worker is freed', T, async () => {
    await withPool({ jobTimeoutMs: 200 }, async (pool) => {
      const stalled = submit(pool, { chunks: 1000, samples: 10 });
      await stalled.next();
      await until(() => pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'the stalled job being cancelled' });
      await assert.rejects(stalled.next(), (err: unknown) => isCode('engine_timeout')(err) && /not read/.test((err as Error).message));
      assert.equal(pool.stats().jobs.jobTimeouts, 1);
    });
  });

  test('an abort cancels the job at once, even while nobody is pulling', T, async () => {
    await withPool({}, async (pool) => {
      const controller = new AbortController();
      const stream = submit(pool, { chunks: 100_000, samples: 10, blockMs: 1 }, controller.signal);
      await stream.next();
      controller.abort(new Error('gone'));
      await until(() => pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'the worker stopping' });
      await assert.rejects(stream.next(), /gone/);
      assert.equal(pool.stats().jobs.cancelled, 1);
    });
  });

  test('return() cancels: a running job, and a queued job never read', T, async () => {
    await withPool({}, async (pool) => {
      const running = submit(pool, { chunks: 100_000, samples: 10, blockMs: 1 });
      await running.next();
      const queued = submit(pool, { chunks: 5, samples: 10 });
      assert.equal(pool.stats().queued, 1);
      await queued.return();
      assert.equal(pool.stats().queued, 0, 'a job returned before its first read leaves the queue');
      await running.return();
      await until(() => pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'the worker stopping' });
      assert.equal(pool.stats().jobs.cancelled, 2);
      assert.deepEqual(await running.next(), { done: true, value: undefined });
    });
  });

  test('an already aborted signal never takes a worker', T, async () => {
    await withPool({}, async (pool) => {
      const controller = new AbortController();
      controller.abort(new Error('before'));
      const stream = submit(pool, { chunks: 5, samples: 10 }, controller.signal);
      assert.equal(pool.stats().busy + pool.stats().queued, 0);
      await assert.rejects(stream.next(), /before/);
    });
  });

  test('an iterator dropped unfinished is cancelled once it is garbage-collected', T, async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await withPool({}, async (pool) => {
      await (async () => {
        const dropped = submit(pool, { chunks: 100_000, samples: 10, blockMs: 1 });
        await dropped.next();
      })();
      await until(() => {
        gc();
        return pool.stats().busy === 0;
      }, { timeoutMs: 3000, intervalMs: 5, what: 'the dropped job being cancelled' });
      assert.equal(pool.stats().jobs.cancelled, 1);
    });
  });

  test('a worker that does not stop within cancelGraceMs is terminated and replaced', T, async () => {
    await withPool({ cancelGraceMs: 100 }, async (pool) => {
      const stuck = submit(pool, { chunks: 10_000, samples: 10, blockMs: 5, ignoreCancel: true }); // 50 s
      await stuck.next();
      await stuck.return();
      await until(() => pool.stats().workersTerminated === 1, { timeoutMs: 3000, intervalMs: 5, what: 'the stuck worker being terminated' });
      await until(() => pool.isReady() && pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'a replacement worker' });
      assert.equal(pool.stats().workerExits, 0, 'a termination is not counted as a crash');
      assert.equal((await drain(submit(pool, { chunks: 2, samples: 10 }))).length, 2);
    });
  });

  test('a worker of a non-interruptible engine is never terminated: it finishes its call, then serves again', T, async () => {
    await withPool({ cancelGraceMs: 30, interruptible: false }, async (pool) => {
      const stuck = submit(pool, { chunks: 40, samples: 10, blockMs: 10, ignoreCancel: true }); // ~400 ms
      await stuck.next();
      await stuck.return();
      await until(() => pool.stats().busy === 0, { timeoutMs: 3000, intervalMs: 5, what: 'the stuck call returning' });
      assert.equal(pool.stats().workersTerminated, 0, 'not terminated past its grace period');
      assert.equal(pool.stats().workerExits, 0);
      assert.equal((await drain(submit(pool, { chunks: 2, samples: 10 }))).length, 2, 'the same worker serves the next job');
    });
  });

  test('stop() of a non-interruptible engine fails the running job and waits for its call, within stopWaitMs', T, async () => {
    await withPool({ interruptible: false }, async (pool) => {
      const running = submit(pool, { chunks: 30, samples: 10, blockMs: 10, ignoreCancel: true }); // ~300 ms
      await running.next();
      const started = performance.now();
      await pool.stop();
      assert.ok(performance.now() - started >= 150, `stop() returned after ${Math.round(performance.now() - started)} ms, before the call could end`);
      assert.equal(pool.stats().busy, 0);
      await assert.rejects(drain(running), isCode('engine_unavailable'));
    });
    await withPool({ interruptible: false, stopWaitMs: 50 }, async (pool) => {
      const hung = submit(pool, { chunks: 100, samples: 10, blockMs: 10, ignoreCancel: true }); // ~1 s
      await hung.next();
      const started = performance.now();
      await pool.stop();
      assert.ok(performance.now() - started < 600, 'stop() gives up waiting after stopWaitMs');
      await assert.rejects(drain(hung), isCode('engine_unavailable'));
    });
  });

  test("a waiting request's first piece runs before another request's continuation, until that one is due", T, async () => {
    await withPool({ queueLimit: 8, continuationMaxWaitMs: 150 }, async (pool) => {
      const order: string[] = [];
      const run = (name: string, job: TestJob, options: SubmitOptions = {}) => {
        const stream = pool.submit(job, new AbortController().signal, decoder(), options);
        return (async () => {
          for await (const _ of stream) if (!order.includes(name)) order.push(name);
        })();
      };
      // Wrapped: an async function returning the promise would wait for the job to end.
      const busy = async (chunks: number) => {
        const speaking = run('speaking', { chunks, samples: 10, blockMs: 20 });
        await until(() => order.includes('speaking'), { timeoutMs: 3000, intervalMs: 5, what: 'the first job starting' });
        return { speaking };
      };

      // Its listener has a second of audio left: the new request goes first.
      let { speaking } = await busy(5);
      const later = run('continuation', { chunks: 1, samples: 10 }, { continuation: true, dueAt: performance.now() + 1000 });
      const fresh = run('first piece', { chunks: 1, samples: 10 });
      await Promise.all([speaking, later, fresh]);
      assert.deepEqual(order, ['speaking', 'first piece', 'continuation']);

      // Its listener runs dry before the new request arrived: the continuation goes first.
      order.length = 0;
      ({ speaking } = await busy(5));
      const due = run('continuation', { chunks: 1, samples: 10 }, { continuation: true, dueAt: performance.now() - 1 });
      const next = run('first piece', { chunks: 1, samples: 10 });
      await Promise.all([speaking, due, next]);
      assert.deepEqual(order, ['speaking', 'continuation', 'first piece']);

      // However much audio its listener has, it waits no longer than continuationMaxWaitMs.
      order.length = 0;
      ({ speaking } = await busy(20)); // ~400 ms
      const queuedAt = performance.now();
      const overdue = run('continuation', { chunks: 1, samples: 10 }, { continuation: true, dueAt: queuedAt + 60_000 });
      await until(() => performance.now() - queuedAt > 150 + 20, { timeoutMs: 3000, intervalMs: 5, what: 'the continuation being overdue' });
      const late = run('first piece', { chunks: 1, samples: 10 });
      await Promise.all([speaking, overdue, late]);
      assert.deepEqual(order, ['speaking', 'continuation', 'first piece']);
    });
  });

  test('background work uses at most all workers but one: a request arriving meanwhile starts at once, and every job completes', T, async () => {
    await withPool({ workers: 2, queueLimit: 8 }, async (pool) => {
      const background = Array.from({ length: 4 }, () => pool.submit({ chunks: 4, samples: 10, blockMs: 20 }, new AbortController().signal, decoder(), { background: true }));
      const drained = background.map((stream) => drain(stream));
      await until(() => pool.stats().backgroundRunning === 1, { timeoutMs: 3000, intervalMs: 5, what: 'one background job running' });
      assert.equal(pool.stats().backgroundRunning, 1, 'the second worker stays idle');
      assert.equal(pool.stats().backgroundQueued, 3);
      const startedAt = performance.now();
      const foreground = submit(pool, { chunks: 1, samples: 10 });
      await foreground.next();
      assert.ok(performance.now() - startedAt < 60, 'the request found a worker at once');
      await drain(foreground);
      const done = await Promise.all(drained);
      assert.ok(done.every((chunks) => chunks.length > 0));
      assert.equal(pool.stats().backgroundRunning, 0);
    });
  });

  test('with one worker a queued request goes before queued background work', T, async () => {
    await withPool({ workers: 1, queueLimit: 8 }, async (pool) => {
      const order: string[] = [];
      const run = (name: string, job: TestJob, options: SubmitOptions = {}) => {
        const stream = pool.submit(job, new AbortController().signal, decoder(), options);
        return (async () => {
          for await (const _ of stream) if (!order.includes(name)) order.push(name);
        })();
      };
      const first = run('background 1', { chunks: 5, samples: 10, blockMs: 20 }, { background: true });
      await until(() => order.includes('background 1'), { timeoutMs: 3000, intervalMs: 5, what: 'background work starting on an idle pool' });
      const second = run('background 2', { chunks: 1, samples: 10 }, { background: true });
      const request = run('request', { chunks: 1, samples: 10 });
      await Promise.all([first, second, request]);
      assert.deepEqual(order, ['background 1', 'request', 'background 2']);
    });
  });

  test('background work is never refused for a full queue nor timed out there; its signal still cancels it', T, async () => {
    await withPool({ workers: 1, queueLimit: 1, queueTimeoutMs: 100 }, async (pool) => {
      const running = submit(pool, { chunks: 30, samples: 10, blockMs: 10 });
      await running.next();
      submit(pool, { chunks: 1, samples: 10 });
      const controller = new AbortController();
      const waiting = pool.submit({ chunks: 1, samples: 10 }, controller.signal, decoder(), { background: true });
      const kept = drain(pool.submit({ chunks: 1, samples: 10 }, new AbortController().signal, decoder(), { background: true }));
      await until(() => pool.stats().jobs.queueTimeouts >= 1, { timeoutMs: 3000, intervalMs: 5, what: 'the foreground job timing out in the queue' });
      assert.equal(pool.stats().backgroundQueued, 2, 'background work is still queued past the queue timeout');
      controller.abort(new Error('cancelled'));
      await assert.rejects(drain(waiting));
      await drain(running);
      assert.ok((await kept).length > 0);
    });
  });

  test('a full queue refuses new requests but never a continuation of one already speaking', T, async () => {
    await withPool({ queueLimit: 1 }, async (pool) => {
      const running = submit(pool, { chunks: 3, samples: 10, blockMs: 30 });
      await running.next();
      const queued = submit(pool, { chunks: 1, samples: 10 });
      assert.throws(() => submit(pool, { chunks: 1, samples: 10 }), isCode('engine_unavailable'));
      const continuation = pool.submit({ chunks: 1, samples: 10 }, new AbortController().signal, decoder(), { continuation: true });
      assert.equal(pool.stats().queued, 2);
      await Promise.all([drain(running), drain(queued), drain(continuation)]);
    });
  });

  test('a job that throws fails with engine_error; a crashed worker fails only its job and is replaced', T, async () => {
    await withPool({ workers: 2 }, async (pool) => {
      await assert.rejects(drain(submit(pool, { chunks: 10, samples: 10, failAfter: 3 })), isCode('engine_error'));
      const victim = submit(pool, { chunks: 100_000, samples: 10, blockMs: 1 });
      await victim.next();
      assert.equal(pool.crashBusyWorker(), true);
      await assert.rejects(drain(victim), (err: unknown) => isCode('engine_error')(err) && /stopped unexpectedly/.test((err as Error).message));
      assert.equal(pool.stats().workerExits, 1);
      assert.equal((await drain(submit(pool, { chunks: 2, samples: 10 }))).length, 2, 'the other worker serves meanwhile');
      await until(() => pool.stats().workers === 2, { timeoutMs: 3000, intervalMs: 5, what: 'a replacement worker' });
      assert.deepEqual({ ...pool.stats().jobs, submitted: 0 }, { submitted: 0, completed: 1, failed: 2, cancelled: 0, queueTimeouts: 0, jobTimeouts: 0, refused: 0 });
    });
  });
});
