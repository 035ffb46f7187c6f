/**
 * @module bench/run
 * `npm run bench`: runs every benchmark in order (serving efficiency, gateway
 * overhead, streaming latency, then intelligibility) and prints their
 * markdown tables with the machine and the date, for pasting into
 * BENCHMARKS.md. Intelligibility needs pocketsphinx and its en-us model; on a
 * machine without them it is skipped with a line saying why.
 */
import { runGatewayOverhead } from './gateway-overhead.js';
import { intelligibilityUnavailable, runIntelligibility } from './intelligibility.js';
import { note } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { runServingEfficiency } from './serving-efficiency.js';
import { runStreamingLatency } from './streaming-latency.js';

const started = performance.now();
const serving = await runServingEfficiency();
const gateway = await runGatewayOverhead();
const streaming = await runStreamingLatency();
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
    '',
    intelligibility.markdown,
  ].join('\n'),
);
