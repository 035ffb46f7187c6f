/**
 * @module bench/tracing
 * The cost of tracing: `POST /tts/sse` at 64 streams (one-sentence
 * transcripts on the embedded eSpeak NG pool, as in streaming latency)
 * against three server children in interleaved slices: tracing off (no
 * `OTEL_*` variable; the reference), on at 100 % sampling exporting OTLP
 * (http/protobuf, batched) to a sink in this process that drains and counts
 * what it receives, and — as a check that "off" costs nothing — a second
 * child with tracing off. Reports audio seconds per wall second against the
 * reference, the p99 first audio of each, and the server's CPU per second
 * of audio (which holds better than rates when other load shares the
 * cores). `BENCH_TRACES_SAMPLER` (default `always_on`) sets the traced
 * child's sampler, e.g. `always_off` to see the cost of the context alone.
 * Run: `npm run build && node dist/bench/tracing.js`.
 */
import { createServer } from 'node:http';
import { Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { combineUsage, otherLoad, waitForQuiet } from './lib/proc.js';
import { markdownTable, num } from './lib/table.js';
import { LEAD_IN_SECONDS, sseClient, streamSlice, type StreamSlice } from './streaming-latency.js';

/** Streams, as in the target: with tracing on at 100 %, throughput ≥ 0.9 and p99 first audio ≤ +2 ms of tracing off. */
export const STREAMS = 64;
export const TARGET_RATIO = 0.9;
export const TARGET_P99_MS = 2;

export async function runTracingBench(): Promise<{ markdown: string }> {
  const seconds = sliceSeconds();
  const roundCount = rounds(3);
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  // The OTLP sink: reads each export whole and answers 200, counting the bytes.
  let exports = 0;
  let exportedBytes = 0;
  const sink = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const config = JSON.stringify({ accounts: { enabled: false } });
  note('tracing: starting three Voicegate children (off, on, off again)');
  const off = await startChild(new URL('./server-child.js', import.meta.url), [config]);
  const on = await startChild(new URL('./server-child.js', import.meta.url), [config], 30_000, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: process.env.BENCH_TRACES_SAMPLER ?? 'always_on' });
  const offAgain = await startChild(new URL('./server-child.js', import.meta.url), [config]);
  const children: [string, ChildServer][] = [
    ['tracing off (reference)', off],
    ['tracing on, 100 % sampled, OTLP', on],
    ['tracing off, a second server', offAgain],
  ];
  const agent = new Agent({ keepAlive: true, maxSockets: STREAMS * 3 });
  const slice = async (server: ChildServer): Promise<Slice<StreamSlice>> => {
    const data = await streamSlice(sseClient(server.url, agent), STREAMS, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS });
    return { rate: data.audioSeconds / data.seconds, data };
  };
  let result;
  try {
    note('warm-up: 3 s on each');
    for (const [, server] of children) await streamSlice(sseClient(server.url, agent), 8, 3, server.pid);
    note(`${roundCount} rounds of ${seconds} s slices at ${STREAMS} streams, tracing off between every other slice`);
    result = await interleave(
      () => slice(off),
      children.slice(1).map(([id, server]) => ({ id, run: () => slice(server) })),
      roundCount,
    );
  } finally {
    agent.destroy();
    for (const [, server] of children) await server.stop();
    sink.close();
  }
  const p99 = (s: Slice<StreamSlice>) => percentile(s.data.firstAudio, 99);
  const rows = [[children[0][0], result.reference, [] as number[], [] as number[]] as const];
  const deltas = new Map<string, number[]>();
  for (const [id, candidate] of result.candidates) {
    const delta = candidate.slices.map((s, i) => {
      const [before, after] = candidate.around[i];
      return p99(s) - (p99(result.reference[before]) + p99(result.reference[after])) / 2;
    }).filter(Number.isFinite); // a slice whose every request outlasted it has no first audio to compare
    deltas.set(id, delta);
    rows.push([id, candidate.slices, candidate.ratios, delta] as const);
  }
  const cells = rows.map(([id, slices, ratios, delta]) => {
    const firstAudio = slices.flatMap((s) => s.data.firstAudio).sort((a, b) => a - b);
    const failed = slices.reduce((n, s) => n + s.data.failed, 0);
    if (failed) notes.push(`${id}: ${failed} failed requests.`);
    const audioSeconds = slices.reduce((n, s) => n + s.data.audioSeconds, 0);
    const audio = audioSeconds / slices.reduce((n, s) => n + s.data.seconds, 0);
    const usage = combineUsage(slices.map((s) => s.data.usage));
    const clientCpu = slices.reduce((n, s) => n + s.data.clientCpuSeconds, 0);
    return [
      id,
      firstAudio.length,
      num(audio, 1),
      ratios.length ? `${num(median(ratios), 2)} (${spread(ratios)})` : '1.00',
      num(percentile(firstAudio, 99), 1),
      delta.length ? `${num(median(delta), 1)} (${spread(delta, 1)})` : '—',
      // What the server spends per second of audio holds better than rates when other load shares the cores.
      num((usage.cpuSeconds / audioSeconds) * 1000, 1),
      num((usage.mainCpuSeconds / audioSeconds) * 1000, 1),
      num(otherLoad(usage, clientCpu), 2),
    ];
  });
  const onId = children[1][0];
  const onRatio = median(result.candidates.get(onId)!.ratios);
  const onDelta = median(deltas.get(onId)!);
  const cpuPerAudio = (slices: Slice<StreamSlice>[]) =>
    slices.reduce((n, s) => n + s.data.usage.cpuSeconds, 0) / slices.reduce((n, s) => n + s.data.audioSeconds, 0);
  const cpuRatio = cpuPerAudio(result.reference) / cpuPerAudio(result.candidates.get(onId)!.slices);
  const mark = (ok: boolean) => `**${ok ? 'MET' : 'MISSED'}**`;
  const markdown = [
    `### Tracing cost (POST /tts/sse, ${STREAMS} streams, one-sentence transcripts, raw pcm_s16le 22050 Hz; ${roundCount} slices of ${seconds} s each after a ${LEAD_IN_SECONDS} s lead-in, interleaved with tracing off)`,
    '',
    markdownTable(['Server', 'Requests', 'Audio s / wall s', 'Ratio vs off (median, range)', 'First audio p99 ms', 'p99 − off p99, ms (median, range per slice)', 'Server CPU ms / audio s', 'Main thread ms / audio s', 'Other load (cores)'], cells),
    '',
    `- Tracing on at 100 %: throughput ${num(onRatio, 2)} of tracing off (target ≥ ${TARGET_RATIO}) — ${mark(onRatio >= TARGET_RATIO)}; p99 first audio ${num(onDelta, 1)} ms from off (target ≤ +${TARGET_P99_MS} ms) — ${mark(onDelta <= TARGET_P99_MS)}.`,
    `- Server CPU per second of audio, off over on: ${num(cpuRatio, 2)} (the throughput a CPU-bound server keeps with tracing on).`,
    `- The OTLP sink received ${exports} exports, ${num(exportedBytes / 1e6, 1)} MB.`,
    '- The second server with tracing off shows the spread between two identical servers: "off" costs nothing if its ratio sits inside it.',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { markdown };
}

if (isMain(import.meta.url)) {
  const report = await runTracingBench();
  console.log(report.markdown);
}
