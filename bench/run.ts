/**
 * @module bench/run
 * `npm run bench`: runs every benchmark in order (serving efficiency, gateway
 * overhead, streaming latency, then neural serving) and prints their markdown
 * tables with the machine and the date, for pasting into BENCHMARKS.md.
 * Neural serving is optional: without its stand-in model it is skipped, and
 * the report says so.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { runGatewayOverhead } from './gateway-overhead.js';
import { note } from './lib/load.js';
import { neuralModelDir, runNeuralServing } from './neural-serving.js';
import { runServingEfficiency } from './serving-efficiency.js';
import { runStreamingLatency } from './streaming-latency.js';

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function nproc(): string {
  try {
    return execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    return String(availableParallelism());
  }
}

const started = performance.now();
const serving = await runServingEfficiency();
const gateway = await runGatewayOverhead();
const streaming = await runStreamingLatency();
const neural = await runNeuralServing();
note(`all benchmarks done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

console.log(
  [
    `## Voicegate benchmarks — ${new Date().toISOString()}`,
    '',
    `Machine: ${nproc()} CPUs (nproc), ${cpuModel()}, Node ${process.version}`,
    '',
    serving.markdown,
    '',
    gateway.markdown,
    '',
    streaming.markdown,
    '',
    neural?.markdown ?? `### Neural serving: skipped (no stand-in model in ${neuralModelDir()}; BENCH_NEURAL_MODEL sets its folder)`,
  ].join('\n'),
);
