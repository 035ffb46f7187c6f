/**
 * @module bench/run
 * `npm run bench`: runs every benchmark in order (serving efficiency, gateway
 * overhead, streaming latency, the ElevenLabs dialect, fallback chains, Wyoming, throughput by language, tracing cost, mixed load, cold start, the audio cache, long-form jobs, neural serving, streams
 * without underruns, usage summaries, first audio through a PostgreSQL outage, then intelligibility) and
 * prints their markdown tables with the machine and the date, for pasting
 * into BENCHMARKS.md. Two are optional and skipped with a line saying why:
 * neural serving without its stand-in model (streams without underruns then
 * has no neural row), intelligibility without pocketsphinx and its en-us model.
 */
import { runCacheBench } from './cache.js';
import { runColdStart } from './cold-start.js';
import { runElevenLabsBench } from './elevenlabs.js';
import { runFallbackBench } from './fallback.js';
import { runGatewayOverhead } from './gateway-overhead.js';
import { runJobsBench } from './jobs.js';
import { runLanguagesBench } from './languages.js';
import { intelligibilityUnavailable, runIntelligibility } from './intelligibility.js';
import { note } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { runMixedLatency } from './mixed-latency.js';
import { neuralModelDir, runNeuralServing } from './neural-serving.js';
import { runServingEfficiency } from './serving-efficiency.js';
import { runStreamingLatency } from './streaming-latency.js';
import { runStreamsBench } from './streams.js';
import { runTracingBench } from './tracing.js';
import { runUsageSummaryBench } from './usage-summary.js';
import { runFailoverBench } from './failover.js';
import { runWyomingBench } from './wyoming.js';

const started = performance.now();
const serving = await runServingEfficiency();
const gateway = await runGatewayOverhead();
const streaming = await runStreamingLatency();
const elevenlabs = await runElevenLabsBench();
const fallback = await runFallbackBench();
const wyoming = await runWyomingBench();
const languages = await runLanguagesBench();
const tracing = await runTracingBench();
const mixed = await runMixedLatency();
const cold = await runColdStart();
const cache = await runCacheBench();
const jobs = await runJobsBench();
const neural = await runNeuralServing();
const streams = await runStreamsBench();
const usage = await runUsageSummaryBench();
const failover = await runFailoverBench();
const unavailable = intelligibilityUnavailable();
if (unavailable) note(`intelligibility skipped: ${unavailable}`);
const intelligibility = unavailable ? { markdown: `### Intelligibility\n\nSkipped: ${unavailable}.` } : await runIntelligibility();
note(`all benchmarks done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

console.log(
  [
    `## Voicegate benchmarks — ${new Date().toISOString()}`,
    '',
    machineLine(),
    '',
    serving.markdown,
    '',
    gateway.markdown,
    '',
    streaming.markdown,
    elevenlabs.markdown,
    '',
    fallback.markdown,
    '',
    wyoming.markdown,
    '',
    languages.markdown,
    '',
    tracing.markdown,
    '',
    mixed.markdown,
    '',
    cold.markdown,
    '',
    cache.markdown,
    '',
    jobs.markdown,
    '',
    neural?.markdown ?? `### Neural serving: skipped (no stand-in model in ${neuralModelDir()}; BENCH_NEURAL_MODEL sets its folder)`,
    '',
    streams.markdown,
    '',
    usage.markdown,
    '',
    failover.markdown,
    '',
    intelligibility.markdown,
  ].join('\n'),
);
