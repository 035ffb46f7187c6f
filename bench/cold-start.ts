/**
 * @module bench/cold-start
 * Warm before ready: how the first callers after a start fare. Each round
 * starts a fresh server (accounts off, the default engines), times start to
 * ready (the spawn to the ready line, then `/readyz` 200), sends 16 SSE
 * requests at once the moment it is ready (cold), then after a short warm
 * load the same 16 again, three times (warm). Target: the cold burst's p99
 * first audio ≤ 2× the warm p99 of the same round.
 */
import { Agent } from 'node:http';
import { startChild } from './lib/child.js';
import { isMain, note, percentile, rounds } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { markdownTable, num } from './lib/table.js';
import { sseClient, type StreamClient } from './streaming-latency.js';

const BURST = 16;
const TEXTS = [
  'Thanks for calling, how can I help you today?',
  'Your appointment is confirmed for Tuesday at two.',
  'Let me check that for you, one moment please.',
  'The package left our warehouse this morning.',
];

/**
 * BENCH_WARM_UP=off: neither warm-up (the engine's nor the server's), for the cold baseline;
 * BENCH_WARM_UP_JOBS=n: eSpeak's warm-up jobs per worker for this run.
 */
const WARM_UP = {
  ...(process.env.BENCH_WARM_UP === 'off' ? { server: { warmUp: false } } : {}),
  ...(process.env.BENCH_WARM_UP === 'off' || process.env.BENCH_WARM_UP_JOBS
    ? { engines: { espeak: { type: 'espeak', warmUpJobs: process.env.BENCH_WARM_UP === 'off' ? 0 : Number(process.env.BENCH_WARM_UP_JOBS) } } }
    : {}),
};

/** First-audio times of `BURST` requests sent at once, ms, sorted. */
async function burst(client: StreamClient): Promise<number[]> {
  const times = await Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const started = performance.now();
      let first = NaN;
      await client(i, TEXTS[i % TEXTS.length], AbortSignal.timeout(30_000), () => {
        if (Number.isNaN(first)) first = performance.now() - started;
      });
      return first;
    }),
  );
  return times.sort((a, b) => a - b);
}

export interface ColdStartRound {
  startToReadyMs: number;
  cold: number[];
  warm: number[];
}

export async function runColdStart(): Promise<{ rounds: ColdStartRound[]; markdown: string }> {
  const results: ColdStartRound[] = [];
  const count = rounds(3);
  for (let round = 0; round < count; round++) {
    const spawned = performance.now();
    const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false }, ...WARM_UP })]);
    // Ready may come seconds after listening (engines warm up first): poll for up to a minute.
    for (let i = 0; (await fetch(`${server.url}/readyz`)).status !== 200; i++) {
      if (i >= 6000) throw new Error('the server did not report ready within 60 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    const startToReadyMs = performance.now() - spawned;
    const agent = new Agent({ keepAlive: true, maxSockets: BURST });
    const client = sseClient(server.url, agent);
    try {
      const cold = await burst(client);
      for (let i = 0; i < 3; i++) await burst(client); // the warm load
      const warm: number[] = [];
      for (let i = 0; i < 3; i++) warm.push(...(await burst(client)));
      warm.sort((a, b) => a - b);
      results.push({ startToReadyMs, cold, warm });
      note(`cold start round ${round + 1}: ready in ${startToReadyMs.toFixed(0)} ms, cold p99 ${percentile(cold, 99).toFixed(1)} ms, warm p99 ${percentile(warm, 99).toFixed(1)} ms`);
    } finally {
      agent.destroy();
      await server.stop();
    }
  }
  const rows = results.map((r, i) => {
    const cold = percentile(r.cold, 99);
    const warm = percentile(r.warm, 99);
    return [i + 1, num(r.startToReadyMs, 0), num(percentile(r.cold, 50), 1), num(cold, 1), num(percentile(r.warm, 50), 1), num(warm, 1), num(cold / warm, 2)];
  });
  const ratios = results.map((r) => percentile(r.cold, 99) / percentile(r.warm, 99));
  const worst = Math.max(...ratios);
  const markdown = [
    '### Cold start: the first 16 SSE requests after ready',
    '',
    machineLine(),
    '',
    markdownTable(['Round', 'Start to ready ms', 'Cold p50 ms', 'Cold p99 ms', 'Warm p50 ms', 'Warm p99 ms', 'Cold p99 ÷ warm p99'], rows),
    '',
    `Target: cold p99 ≤ 2 × warm p99 of the same round: worst round ${num(worst, 2)} → **${worst <= 2 ? 'MET' : 'MISSED'}**.`,
  ].join('\n');
  return { rounds: results, markdown };
}

if (isMain(import.meta.url)) console.log((await runColdStart()).markdown);
