/**
 * @module bench/cache
 * The audio cache: what a hit costs against a miss, and against the bare
 * `node:http` floor. One Voicegate child with the cache on and accounts off:
 * - first audio of `POST /tts/sse` at 64 concurrent streams, hits (a few
 *   sentences, each made once beforehand) and misses (every request's text
 *   new, so the engine runs), in alternating slices of the same run;
 * - served hits per second on `/tts/bytes` (one cached answer, 16
 *   connections) against a bare `node:http` child answering a clip of the
 *   same size, in alternating slices (lib/interleave).
 * Run: `npm run build && node dist/bench/cache.js`.
 */
import { Agent } from 'node:http';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { combineLoads, isMain, loadSlice, note, percentile, rounds, runLoad, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { combineUsage, cores, waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict, type Cell } from './lib/table.js';
import { LEAD_IN_SECONDS, SENTENCES, sseClient, streamSlice, type StreamSlice } from './streaming-latency.js';

/** Hit first-audio p99 at STREAMS concurrent streams, ms. */
export const TARGET_HIT_P99_MS = 2;
/** Served hits per second over bare `node:http`'s. */
export const TARGET_HIT_RATIO = 0.75;
const STREAMS = 64;
const CONNECTIONS = 16;
const NATIVE_RATE = 22050;
const FORMAT = { container: 'raw', encoding: 'pcm_s16le', sample_rate: NATIVE_RATE } as const;

const sseBody = (text: string) => ({ model_id: 'gepard-1.0', transcript: text, voice: { mode: 'id', id: 'sarah' }, output_format: FORMAT });
const BYTES_BODY = sseBody('Hello, thanks for calling.');

/** Letters only (a number would be read out differently by the engine's text rules). */
function letters(n: number): string {
  let text = '';
  do {
    text += String.fromCharCode(97 + (n % 26));
    n = Math.floor(n / 26);
  } while (n > 0);
  return text;
}

let made = 0;
/** A sentence no request of this run has sent: a miss. */
const missBody = (text: string) => sseBody(`${text.slice(0, -1)} ${letters(made++)} ${letters(process.pid)}.`);

export interface CacheReport {
  markdown: string;
  hitP99: number;
  ratio: number;
}

export async function runCacheBench(): Promise<CacheReport> {
  const seconds = sliceSeconds();
  const roundCount = rounds(2);
  const notes: string[] = [];
  const children: ChildServer[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: STREAMS });
  let markdown = '';
  let hitP99 = NaN;
  let ratio = NaN;
  try {
    if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
    note('audio cache: starting the Voicegate child (cache on, accounts off)');
    const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false }, cache: { enabled: true } })]);
    children.push(server);

    // Each sentence made once, so every later request for it is a hit.
    for (const text of SENTENCES) {
      const res = await fetch(`${server.url}/tts/sse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sseBody(text)), signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`the cache benchmark's warm-up request answered HTTP ${res.status}`);
    }
    const answer = async () => {
      const res = await fetch(`${server.url}/tts/bytes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BYTES_BODY), signal: AbortSignal.timeout(30_000) });
      const bytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200) throw new Error(`/tts/bytes answered HTTP ${res.status}`);
      return { bytes, cache: res.headers.get('x-cache'), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
    };
    await answer();
    const reference = await answer();
    if (reference.cache !== 'hit') throw new Error(`the second identical /tts/bytes request answered x-cache: ${reference.cache}`);
    const bare = await startChild(new URL('./bare-child.js', import.meta.url), [String(reference.bytes), reference.contentType]);
    children.push(bare);

    const hits = sseClient(server.url, agent, sseBody);
    const misses = sseClient(server.url, agent, missBody);
    note(`warm-up, then ${roundCount} rounds of ${seconds} s: SSE hits and misses at ${STREAMS} streams, /tts/bytes hits and bare node:http at ${CONNECTIONS} connections`);
    await streamSlice(hits, STREAMS, 1, server.pid);
    await streamSlice(misses, 8, 1, server.pid);
    const streamed = await interleave<StreamSlice, StreamSlice>(
      async () => asSlice(await streamSlice(hits, STREAMS, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS })),
      [{ id: 'miss', run: async () => asSlice(await streamSlice(misses, STREAMS, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS })) }],
      roundCount,
    );

    const load = (target: ChildServer): LoadOptions => ({ url: target.url, path: '/tts/bytes', bodies: [BYTES_BODY], connections: CONNECTIONS, seconds });
    await runLoad({ ...load(bare), seconds: 1 });
    await runLoad({ ...load(server), seconds: 1 });
    const served = await interleave<LoadSlice, LoadSlice>(
      async () => loadSlice(bare.pid, load(bare)).then((data) => ({ rate: data.load.ok / data.load.seconds, data })),
      [{ id: 'hit', run: async () => loadSlice(server.pid, load(server)).then((data) => ({ rate: data.load.ok / data.load.seconds, data })) }],
      roundCount,
    );

    const streamRow = (name: string, slices: Slice<StreamSlice>[]): Cell[] => {
      const first = slices.flatMap((s) => s.data.firstAudio).sort((a, b) => a - b);
      const failed = slices.reduce((n, s) => n + s.data.failed, 0);
      if (failed) notes.push(`${name}: ${failed} failed streams.`);
      const used = cores(combineUsage(slices.map((s) => s.data.usage)));
      return [name, first.length, num(percentile(first, 50), 2), num(percentile(first, 99), 2), num(first.at(-1) ?? NaN, 2), failed, num(used.all, 2), num(used.main, 2)];
    };
    const hitFirst = streamed.reference.flatMap((s) => s.data.firstAudio).sort((a, b) => a - b);
    hitP99 = percentile(hitFirst, 99);
    const missFirst = streamed.candidates.get('miss')!.slices.flatMap((s) => s.data.firstAudio).sort((a, b) => a - b);

    const loadRow = (name: string, slices: Slice<LoadSlice>[], ratioCell: string): Cell[] => {
      const combined = combineLoads(slices.map((s) => s.data.load));
      if (combined.failed) notes.push(`${name}: ${combined.failed} failed requests.`);
      const used = cores(combineUsage(slices.map((s) => s.data.server)));
      return [name, num(combined.ok / combined.seconds, 0), ratioCell, spread(slices.map((s) => s.rate), 0), num(percentile(combined.latencies, 50), 2), num(percentile(combined.latencies, 99), 2), combined.failed, num(used.all, 2), num(used.main, 2)];
    };
    const hitLoad = served.candidates.get('hit')!;
    ratio = median(hitLoad.ratios);

    markdown = [
      `### Audio cache (SSE first audio at ${STREAMS} streams; /tts/bytes, ${reference.bytes} bytes per answer, ${CONNECTIONS} connections; ${roundCount} slices of ${seconds} s per row)`,
      '',
      markdownTable(
        ['SSE /tts/sse (gepard-1.0, raw s16 22050 Hz)', 'Requests', 'First audio p50 ms', 'p99 ms', 'max ms', 'Failed', 'Server CPU (cores)', 'Main thread (cores)'],
        [streamRow('hit (5 sentences, each made beforehand)', streamed.reference), streamRow('miss (every text new: the engine runs)', streamed.candidates.get('miss')!.slices)],
      ),
      '',
      markdownTable(
        ['/tts/bytes', 'Req/s', 'Ratio vs bare (median)', 'Per-slice req/s', 'p50 ms', 'p99 ms', 'Failed', 'Server CPU (cores)', 'Main thread (cores)'],
        [loadRow('bare node:http', served.reference, '1.00'), loadRow('Voicegate hit, accounts off', hitLoad.slices, num(ratio, 2))],
      ),
      '',
      `- Hit first audio p99 at ${STREAMS} streams: ${num(hitP99, 2)} ms (target ≤ ${TARGET_HIT_P99_MS} ms) — **${hitP99 <= TARGET_HIT_P99_MS ? 'MET' : 'MISSED'}**; misses in the same run: p50 ${num(percentile(missFirst, 50), 1)} ms, p99 ${num(percentile(missFirst, 99), 1)} ms.`,
      `- ${verdict('Served hits per second over bare node:http', ratio, TARGET_HIT_RATIO)}.`,
      '- First audio is measured by the client in the benchmark process (request sent to the first complete `chunk` event), so it holds the loopback and the client as well as the server\'s main thread: an upper bound of the server\'s own path.',
      '- Hit and miss slices alternate, as do the bare and Voicegate /tts/bytes slices; ratio = median over slices of (Voicegate slice req/s ÷ mean of the bare slices around it).',
      ...notes.map((n) => `- ${n}`),
    ].join('\n');
  } finally {
    agent.destroy();
    for (const child of children) await child.stop();
  }
  return { markdown, hitP99, ratio };
}

function asSlice(slice: StreamSlice): Slice<StreamSlice> {
  return { rate: slice.firstAudio.length / slice.seconds, data: slice };
}

if (isMain(import.meta.url)) {
  const report = await runCacheBench();
  console.log(report.markdown);
}
