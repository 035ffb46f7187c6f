/**
 * @module bench/cache
 * The audio cache: what a hit costs against a miss, and against the bare
 * `node:http` floor. One Voicegate child with the cache on and accounts off:
 * - first audio of `POST /tts/sse` at 64 concurrent streams, hits (a few
 *   sentences, each made once beforehand) and misses (every request's text
 *   new, so the engine runs), in alternating slices of the same run. First
 *   audio is timed on the server's side (the child's `BENCH_FIRST_AUDIO`
 *   opt-in, from its diagnostics events): from the handler's start and from
 *   the request's arrival to the first audio handed to the socket — the
 *   main thread's path — and, beside it, by the client (request sent to the
 *   first complete `chunk` event), which also holds the loopback, the
 *   client's own work and the wait for the server's event loop;
 * - served hits per second on `/tts/bytes` (one cached answer, 16
 *   connections), against a bare `node:http` child and a minimal Fastify
 *   child answering a pre-made clip of the same size with the same headers
 *   and framing (Content-Length), every row driven by the same lean client,
 *   in alternating slices (lib/interleave).
 * Run: `npm run build && node dist/bench/cache.js`.
 */
import { Agent, request } from 'node:http';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { runLeanLoad } from './lib/lean-load.js';
import { combineLoads, isMain, loadSlice, note, percentile, rounds, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { combineUsage, cores, otherLoad, waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict, type Cell } from './lib/table.js';
import { LEAD_IN_SECONDS, SENTENCES, streamSlice, type StreamClient, type StreamSlice } from './streaming-latency.js';

/** Hit first-audio p99 at STREAMS concurrent streams on the server's side, ms. */
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

const FIRST_CHUNK = Buffer.from('data: {"type":"chunk"');
const DONE = Buffer.from('"type":"done"');
const TAIL_BYTES = 256;

/**
 * A lean SSE client: bytes, never strings. It looks at the body only until the first event is
 * complete (first audio: that event is a `chunk`), then keeps the last few bytes to check that the
 * stream ended with `done`. The server's answers are large (a hit is the whole sentence at once):
 * decoding and scanning them as text would load the 2 cores the server shares.
 */
function leanSseClient(url: string, agent: Agent, makeBody: (text: string) => Record<string, unknown>): StreamClient {
  const target = new URL('/tts/sse', url);
  return (_stream, text, signal, onAudio) =>
    new Promise<void>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(makeBody(text)));
      const req = request(target, { method: 'POST', agent, signal, headers: { 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode}`));
          return;
        }
        let head: Buffer | null = Buffer.alloc(0);
        let tail: Buffer = Buffer.alloc(0);
        let failed = false;
        res.on('data', (part: Buffer) => {
          if (head) {
            const seen = head.length;
            head = seen === 0 ? part : Buffer.concat([head, part]);
            const end = head.indexOf('\n\n', Math.max(0, seen - 1));
            if (end >= 0) {
              if (head.subarray(0, FIRST_CHUNK.length).equals(FIRST_CHUNK)) onAudio(end);
              else failed = true;
              head = null;
            }
          }
          tail = part.length >= TAIL_BYTES ? part.subarray(part.length - TAIL_BYTES) : Buffer.concat([tail, part]).subarray(-TAIL_BYTES);
        });
        res.on('end', () => (failed || head !== null || tail.indexOf(DONE) < 0 ? reject(new Error('the stream did not open with audio and end with done')) : resolve()));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
}

type Sample = [at: number, cache: number, fromHandlerMs: number, fromArrivalMs: number | null];

interface SseSlice {
  client: StreamSlice;
  /** First audio timed by the server, ms, sorted: from the handler's start, from the request's arrival. */
  fromHandler: number[];
  fromArrival: number[];
  /** Samples in the window served otherwise than the slice meant (a miss in a hit slice…). */
  otherwise: number;
}

async function takeSamples(url: string): Promise<Sample[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as Sample[];
}

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
    note('audio cache: starting the Voicegate child (cache on, accounts off, first audio timed on its side)');
    const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false }, cache: { enabled: true } })], 30_000, { BENCH_FIRST_AUDIO: '1' });
    children.push(server);
    const samplesUrl = String(server.ready.firstAudioUrl);

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
      return { bytes, headers: res.headers, contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
    };
    await answer();
    const reference = await answer();
    if (reference.headers.get('x-cache') !== 'hit') throw new Error(`the second identical /tts/bytes request answered x-cache: ${reference.headers.get('x-cache')}`);
    // Voicegate's other headers (x-request-id, x-cache…) go out with the reference answers too.
    const sameHeaders: Record<string, string> = {};
    for (const [name, value] of reference.headers) if (!['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) sameHeaders[name] = value;
    const referenceArgs = [String(reference.bytes), reference.contentType, JSON.stringify(sameHeaders)];
    const bare = await startChild(new URL('./bare-child.js', import.meta.url), referenceArgs);
    children.push(bare);
    const fastify = await startChild(new URL('./fastify-child.js', import.meta.url), referenceArgs);
    children.push(fastify);

    const hits = leanSseClient(server.url, agent, sseBody);
    const misses = leanSseClient(server.url, agent, missBody);
    const sseSlice = async (client: StreamClient, cache: number): Promise<Slice<SseSlice>> => {
      await takeSamples(samplesUrl);
      const data = await streamSlice(client, STREAMS, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS });
      const inWindow = (await takeSamples(samplesUrl)).filter(([at]) => at >= data.window.start && at <= data.window.end);
      const mine = inWindow.filter(([, served]) => served === cache);
      const sorted = (list: number[]) => list.sort((a, b) => a - b);
      return {
        rate: data.firstAudio.length / data.seconds,
        data: {
          client: data,
          fromHandler: sorted(mine.map(([, , handler]) => handler)),
          fromArrival: sorted(mine.flatMap(([, , , arrival]) => (arrival === null ? [] : [arrival]))),
          otherwise: inWindow.length - mine.length,
        },
      };
    };
    note(`warm-up, then ${roundCount} rounds of ${seconds} s: SSE hits and misses at ${STREAMS} streams; /tts/bytes hits, bare node:http and minimal Fastify at ${CONNECTIONS} connections`);
    await streamSlice(hits, STREAMS, 1, server.pid);
    await streamSlice(misses, 8, 1, server.pid);
    const streamed = await interleave<SseSlice, SseSlice>(() => sseSlice(hits, 1), [{ id: 'miss', run: () => sseSlice(misses, 0) }], roundCount);

    const load = (target: ChildServer, s = seconds): LoadOptions => ({ url: target.url, path: '/tts/bytes', bodies: [BYTES_BODY], connections: CONNECTIONS, seconds: s });
    const loadRun = async (target: ChildServer): Promise<Slice<LoadSlice>> => {
      const data = await loadSlice(target.pid, load(target), runLeanLoad);
      return { rate: data.load.ok / data.load.seconds, data };
    };
    for (const target of [bare, fastify, server]) await runLeanLoad(load(target, 1));
    const served = await interleave<LoadSlice, LoadSlice>(
      () => loadRun(bare),
      [
        { id: 'fastify', run: () => loadRun(fastify) },
        { id: 'hit', run: () => loadRun(server) },
      ],
      roundCount,
    );

    const streamRow = (name: string, slices: Slice<SseSlice>[]): Cell[] => {
      const handler = slices.flatMap((s) => s.data.fromHandler).sort((a, b) => a - b);
      const arrival = slices.flatMap((s) => s.data.fromArrival).sort((a, b) => a - b);
      const client = slices.flatMap((s) => s.data.client.firstAudio).sort((a, b) => a - b);
      const failed = slices.reduce((n, s) => n + s.data.client.failed, 0);
      const otherwise = slices.reduce((n, s) => n + s.data.otherwise, 0);
      if (failed) notes.push(`${name}: ${failed} failed streams.`);
      if (otherwise) notes.push(`${name}: ${otherwise} first audios in its windows were served otherwise (left out).`);
      const usage = combineUsage(slices.map((s) => s.data.client.usage));
      const clientCpu = slices.reduce((n, s) => n + s.data.client.clientCpuSeconds, 0);
      const used = cores(usage);
      return [
        name,
        arrival.length,
        num(percentile(handler, 50), 2),
        num(percentile(handler, 99), 2),
        num(percentile(arrival, 50), 2),
        num(percentile(arrival, 99), 2),
        num(arrival.at(-1) ?? NaN, 2),
        num(percentile(client, 50), 1),
        num(percentile(client, 99), 1),
        failed,
        num(used.all, 2),
        num(used.main, 2),
        num(clientCpu / usage.wallSeconds, 2),
        num(otherLoad(usage, clientCpu), 2),
      ];
    };
    const hitSlices = streamed.reference;
    const missSlices = streamed.candidates.get('miss')!.slices;
    const p99Of = (slices: Slice<SseSlice>[], pick: (s: SseSlice) => number[]) => percentile(slices.flatMap((s) => pick(s.data)).sort((a, b) => a - b), 99);
    hitP99 = p99Of(hitSlices, (s) => s.fromArrival);

    const loadRow = (name: string, slices: Slice<LoadSlice>[], ratioCell: string): Cell[] => {
      const combined = combineLoads(slices.map((s) => s.data.load));
      if (combined.failed) notes.push(`${name}: ${combined.failed} failed requests.`);
      const usage = combineUsage(slices.map((s) => s.data.server));
      const used = cores(usage);
      return [
        name,
        num(combined.ok / combined.seconds, 0),
        ratioCell,
        spread(slices.map((s) => s.rate), 0),
        num(percentile(combined.latencies, 50), 2),
        num(percentile(combined.latencies, 99), 2),
        combined.failed,
        num((usage.mainCpuSeconds / combined.ok) * 1e6, 0),
        num(used.all, 2),
        num(used.main, 2),
        num(combined.loadgenCpuSeconds / usage.wallSeconds, 2),
        num(otherLoad(usage, combined.loadgenCpuSeconds), 2),
      ];
    };
    const hitLoad = served.candidates.get('hit')!;
    const fastifyLoad = served.candidates.get('fastify')!;
    ratio = median(hitLoad.ratios);

    markdown = [
      `### Audio cache (SSE first audio at ${STREAMS} streams; /tts/bytes, ${reference.bytes} bytes per answer, ${CONNECTIONS} connections; ${roundCount} slices of ${seconds} s per row)`,
      '',
      markdownTable(
        [
          'SSE /tts/sse (gepard-1.0, raw s16 22050 Hz)',
          'Requests',
          'Server, from handler p50 ms',
          'p99 ms',
          'Server, from arrival p50 ms',
          'p99 ms',
          'max ms',
          'Client p50 ms',
          'Client p99 ms',
          'Failed',
          'Server CPU (cores)',
          'Main thread (cores)',
          'Client CPU (cores)',
          'Other load (cores)',
        ],
        [streamRow('hit (5 sentences, each made beforehand)', hitSlices), streamRow('miss (every text new: the engine runs)', missSlices)],
      ),
      '',
      markdownTable(
        ['/tts/bytes', 'Req/s', 'Ratio vs bare (median)', 'Per-slice req/s', 'p50 ms', 'p99 ms', 'Failed', 'Main thread µs / req', 'Server CPU (cores)', 'Main thread (cores)', 'Client CPU (cores)', 'Other load (cores)'],
        [
          loadRow('bare node:http', served.reference, '1.00'),
          loadRow('minimal Fastify route (ceiling)', fastifyLoad.slices, num(median(fastifyLoad.ratios), 2)),
          loadRow('Voicegate hit, accounts off', hitLoad.slices, num(ratio, 2)),
        ],
      ),
      '',
      `- Hit first audio p99 at ${STREAMS} streams on the server's path (arrival → first audio handed to the socket): ${num(hitP99, 2)} ms (target ≤ ${TARGET_HIT_P99_MS} ms) — **${hitP99 <= TARGET_HIT_P99_MS ? 'MET' : 'MISSED'}**; from the handler ${num(p99Of(hitSlices, (s) => s.fromHandler), 2)} ms; misses in the same run ${num(p99Of(missSlices, (s) => s.fromArrival), 1)} ms.`,
      `- ${verdict('Served hits per second over bare node:http', ratio, TARGET_HIT_RATIO)}; the minimal Fastify route makes ${num(median(fastifyLoad.ratios), 2)} of bare, Voicegate ${num(median(hitLoad.ratios.map((r, i) => r / fastifyLoad.ratios[i])), 2)} of that.`,
      "- Server first audio is timed in the server child from its diagnostics events: from the handler's start (the session's own `ttfaMs`) and from Node's `request` event (headers parsed), to the first audio's write callback. The client's figure (request sent → first complete `chunk` event, in the benchmark process beside 64 streams) also holds the loopback, the client and the wait for the server's event loop under 64 closed-loop streams.",
      '- Hit and miss slices alternate, as do the bare, Fastify and Voicegate /tts/bytes slices; ratio = median over slices of (slice req/s ÷ mean of the bare slices around it). Every /tts/bytes row is driven by the same lean client (bench/lib/lean-load.ts), and bare and Fastify answer the same bytes with the same headers.',
      ...notes.map((n) => `- ${n}`),
    ].join('\n');
  } finally {
    agent.destroy();
    for (const child of children) await child.stop();
  }
  return { markdown, hitP99, ratio };
}

if (isMain(import.meta.url)) {
  const report = await runCacheBench();
  console.log(report.markdown);
}
