/**
 * @module bench/streaming-latency
 * Streaming latency: time to first audio of `POST /tts/sse` and of the
 * `/tts/websocket` (raw `ws` client, plain ws://, one context per request)
 * on the embedded eSpeak NG pool with one-sentence transcripts, at several
 * concurrencies, next to the engine's own time to its first chunk: an
 * `EspeakPool` with the same worker count driven in-process at the same
 * concurrency. Also audio seconds delivered per wall second and the server
 * child's peak RSS. Slices of the three alternate (see lib/interleave). Each
 * slice's streams start together and run for a lead-in before the measured
 * window, so the window sees them spread out as streams are in use; the
 * first request of every stream, all sent in the same millisecond, is
 * reported on its own.
 * Run: `npm run build && node dist/bench/streaming-latency.js`.
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket, type RawData } from 'ws';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { combineUsage, cores, measureProcess, otherLoad, waitForQuiet, type Usage } from './lib/proc.js';
import { markdownTable, num, type Cell } from './lib/table.js';

/** Concurrent streams per row (one stream = one request at a time, back to back). */
export const CONCURRENCIES = [1, 16, 64];
/** At concurrency 1, first audio within this many ms of the engine's first chunk (p50 against p50). */
export const TARGET_OVERHEAD_MS = 3;
/** p99 time to first audio at the highest concurrency. */
export const TARGET_P99_MS = 50;
/** Server child's peak RSS at the highest concurrency. */
export const TARGET_RSS_MIB = 300;

/** One-sentence English transcripts, rotated across requests. */
export const SENTENCES = [
  'Thanks for calling, your order has shipped.',
  'Please hold while I transfer you to the next available agent.',
  'Your appointment is confirmed for three thirty tomorrow afternoon.',
  'The quick brown fox jumps over the lazy dog.',
  'Good morning, how can I help you today?',
];

const VOICE_ID = 'sarah';
const NATIVE_RATE = 22050;
/** s16 at the engine's native rate: no resampling, so the rows compare transport cost only. */
const OUTPUT_FORMAT = { container: 'raw', encoding: 'pcm_s16le', sample_rate: NATIVE_RATE } as const;
const BYTES_PER_SECOND = 2 * NATIVE_RATE;
/** Warm-up per side: V8 keeps tiering eSpeak's wasm up for the first seconds of load. */
const WARMUP_SECONDS = 3;
/** Streams run this long before each measured window, so it sees them spread out. */
export const LEAD_IN_SECONDS = 1;

function body(text: string, contextId?: string): Record<string, unknown> {
  return {
    model_id: 'gepard-1.0',
    transcript: text,
    voice: { mode: 'id', id: VOICE_ID },
    output_format: OUTPUT_FORMAT,
    ...(contextId ? { context_id: contextId, continue: false } : {}),
  };
}

/**
 * One streamed request on concurrent stream number `stream`: resolves when the stream has ended,
 * calls `onAudio` with the byte count of every audio piece as it arrives (s16 bytes at the native
 * rate), and stops early when `signal` aborts.
 */
export type StreamClient = (stream: number, text: string, signal: AbortSignal, onAudio: (bytes: number) => void) => Promise<void>;

export interface StreamSlice {
  /** Time to first audio of every request started in the window, ms, sorted. */
  firstAudio: number[];
  /** Time to first audio of each stream's first request: all streams starting in the same millisecond, ms, sorted. */
  together: number[];
  failed: number;
  /** Audio that arrived inside the window. */
  audioSeconds: number;
  seconds: number;
  /** The server child (served paths) or this process (engine) over the window. */
  usage: Usage;
  /** CPU seconds of this process (the stream clients; for the engine rows also the pool). */
  clientCpuSeconds: number;
  /** The measured window, in epoch milliseconds (to match another process's timestamps). */
  window: { start: number; end: number };
}

/**
 * Runs `concurrency` loops of back-to-back requests for `leadInSeconds` and then a window of
 * `seconds`. The streams all start together; what is measured is the window, once they have
 * spread out into a steady state, and separately each stream's first request (`together`). Every
 * request started inside the window is followed until its first audio (so slow first chunks are
 * never cut off), then stopped; audio counts only while the window is open. `texts` are rotated
 * (stream n starts at the n-th); `bytesPerSecond` turns the audio bytes the client reports into
 * seconds.
 */
export async function streamSlice(
  client: StreamClient,
  concurrency: number,
  seconds: number,
  watchPid: number,
  { texts = SENTENCES, bytesPerSecond = BYTES_PER_SECOND, leadInSeconds = 0 }: { texts?: string[]; bytesPerSecond?: number; leadInSeconds?: number } = {},
): Promise<StreamSlice> {
  const firstAudio: number[] = [];
  const together: number[] = [];
  let bytes = 0;
  let failed = 0;
  const windowStart = performance.now() + leadInSeconds * 1000;
  const deadline = windowStart + seconds * 1000;
  const running = new Set<AbortController>();
  const closing = setTimeout(() => {
    for (const controller of running) controller.abort(new Error('window closed'));
  }, deadline - performance.now());
  const loop = async (stream: number) => {
    for (let i = stream; performance.now() < deadline; i++) {
      const controller = new AbortController();
      const started = performance.now();
      const measured = started >= windowStart;
      const first = i === stream;
      let gotAudio = false;
      const onAudio = (size: number) => {
        const now = performance.now();
        if (now >= windowStart && now <= deadline) bytes += size;
        if (gotAudio || size === 0) return;
        gotAudio = true;
        if (first) together.push(now - started);
        if (measured) firstAudio.push(now - started);
        if (now > deadline) controller.abort(new Error('window closed'));
        else running.add(controller);
      };
      try {
        await client(stream, texts[i % texts.length], controller.signal, onAudio);
      } catch (err) {
        if (!controller.signal.aborted) {
          failed++;
          if (failed === 1) note(`stream failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      } finally {
        running.delete(controller);
      }
    }
  };
  const loops = Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
  if (leadInSeconds > 0) await sleep(windowStart - performance.now());
  const watch = measureProcess(watchPid);
  const cpuBefore = process.cpuUsage();
  await loops;
  clearTimeout(closing);
  const usage = watch.stop();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    firstAudio: firstAudio.sort((a, b) => a - b),
    together: together.sort((a, b) => a - b),
    failed,
    audioSeconds: bytes / bytesPerSecond,
    seconds,
    usage,
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    window: { start: performance.timeOrigin + windowStart, end: performance.timeOrigin + deadline },
  };
}

function engineClient(pool: EspeakPool): StreamClient {
  const voice = NAMED_VOICES.find((v) => v.id === VOICE_ID)!;
  return async (_stream, text, signal, onAudio) => {
    for await (const chunk of pool.synthesize({ text, voice, speed: 1, wordTimings: false }, signal)) onAudio(chunk.samples.length * 2);
  };
}

/** Audio bytes in one SSE `chunk` event, from its base64 length (no JSON parse: the client shares the CPUs). */
function base64Bytes(text: string, from: number): number {
  const start = text.indexOf('"data":"', from);
  if (start < 0) return 0;
  const begin = start + 8;
  const end = text.indexOf('"', begin);
  let padding = 0;
  if (text.charCodeAt(end - 1) === 61) padding++;
  if (text.charCodeAt(end - 2) === 61) padding++;
  return ((end - begin) / 4) * 3 - padding;
}

/** `POST /tts/sse` with the body `makeBody` gives each text (by default gepard-1.0, voice sarah, raw s16 22050 Hz). */
export function sseClient(url: string, agent: Agent, makeBody: (text: string) => Record<string, unknown> = body): StreamClient {
  const target = new URL('/tts/sse', url);
  return (_stream, text, signal, onAudio) =>
    new Promise<void>((resolve, reject) => {
      const payload = JSON.stringify(makeBody(text));
      const req = request(
        target,
        { method: 'POST', agent, signal, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`HTTP ${res.statusCode}`));
            return;
          }
          res.setEncoding('utf8');
          let buffered = '';
          let failed = false;
          res.on('data', (part: string) => {
            buffered += part;
            let at = 0;
            for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n', at)) {
              const head = buffered.slice(at, at + 24);
              if (head.startsWith('data: {"type":"chunk"')) onAudio(base64Bytes(buffered, at));
              else if (head.startsWith('data: {"type":"error"')) failed = true;
              at = end + 2;
            }
            buffered = buffered.slice(at);
          });
          res.on('end', () => (failed ? reject(new Error('error event')) : resolve()));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/**
 * One WebSocket connection carrying one context at a time (a new context id per request), each
 * turn sent whole in one message: `makeBody(text, contextId)` (by default gepard-1.0, voice sarah,
 * raw s16 22050 Hz).
 */
export class WsStream {
  private current: { needle: string; onAudio: (bytes: number) => void; resolve: () => void; reject: (err: Error) => void } | null = null;
  private next = 0;

  private constructor(
    private readonly ws: WebSocket,
    private readonly makeBody: (text: string, contextId: string) => Record<string, unknown>,
  ) {
    ws.on('message', (data: RawData) => this.onMessage(data as Buffer));
    ws.on('close', () => this.current?.reject(new Error('websocket closed')));
    ws.on('error', () => {}); // 'close' follows and fails the open request
  }

  static open(url: string, makeBody: (text: string, contextId: string) => Record<string, unknown> = body): Promise<WsStream> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/tts/websocket`, { perMessageDeflate: false });
      ws.once('open', () => resolve(new WsStream(ws, makeBody)));
      ws.once('error', reject);
    });
  }

  private onMessage(data: Buffer): void {
    const current = this.current;
    // Events of a cancelled context may still arrive; only the open context's count.
    if (!current || data.lastIndexOf(current.needle) < 0) return;
    const head = data.toString('latin1', 0, 16);
    if (head.startsWith('{"type":"chunk"')) {
      const start = data.indexOf('"data":"') + 8;
      const end = data.indexOf('"', start);
      const padding = (data[end - 1] === 61 ? 1 : 0) + (data[end - 2] === 61 ? 1 : 0);
      current.onAudio(((end - start) / 4) * 3 - padding);
    } else if (head.startsWith('{"type":"done"')) {
      this.current = null;
      current.resolve();
    } else if (head.startsWith('{"type":"error"')) {
      this.current = null;
      current.reject(new Error(`error event: ${data.toString('utf8').slice(0, 200)}`));
    }
  }

  /** Speaks `text` as one new context; cancels it when `signal` aborts. */
  speak(text: string, signal: AbortSignal, onAudio: (bytes: number) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const contextId = `c${this.next++}`;
      const onAbort = () => {
        if (this.current?.needle !== needle) return;
        this.current = null;
        this.ws.send(JSON.stringify({ context_id: contextId, cancel: true }));
        reject(signal.reason);
      };
      const needle = `"context_id":"${contextId}"`;
      this.current = {
        needle,
        onAudio,
        resolve: () => (signal.removeEventListener('abort', onAbort), resolve()),
        reject: (err) => (signal.removeEventListener('abort', onAbort), reject(err)),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.ws.send(JSON.stringify(this.makeBody(text, contextId)));
    });
  }

  close(): void {
    this.ws.close();
  }
}

export interface StreamingReport {
  markdown: string;
}

interface Row {
  concurrency: number;
  path: string;
  slices: Slice<StreamSlice>[];
  /** Per served slice: its p50 minus the mean p50 of the engine slices around it. */
  deltas: number[];
  ratios: number[];
}

const PATHS = { engine: 'EspeakPool in-process (engine)', sse: 'POST /tts/sse', ws: 'WebSocket /tts/websocket' } as const;

export async function runStreamingLatency(): Promise<StreamingReport> {
  const seconds = sliceSeconds();
  const roundCount = rounds(2);
  const notes: string[] = [];
  const waited = await waitForQuiet();
  if (waited === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  note('streaming latency: starting the Voicegate child');
  const server: ChildServer = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false } })]);
  let pool: EspeakPool | null = null;
  const sockets: WsStream[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: Math.max(...CONCURRENCIES) });
  const rows: Row[] = [];
  let workers = 0;
  let lifetimePeak = NaN;
  try {
    const espeak = (server.ready.engines as { id: string; workers?: number }[]).find((e) => e.id === 'espeak');
    workers = espeak?.workers ?? 0;
    if (!workers) throw new Error('the server child reports no espeak workers');
    pool = new EspeakPool({ id: 'espeak', workers, queueLimit: 256, highWater: 32, logger: createLogger('silent') });
    await pool.start();
    const engine = engineClient(pool);
    const sse = sseClient(server.url, agent);
    for (let i = 0; i < Math.max(...CONCURRENCIES); i++) sockets.push(await WsStream.open(server.url));
    // Stream n always uses connection n, so a connection never carries two contexts at once.
    const ws: StreamClient = (stream, text, signal, onAudio) => sockets[stream].speak(text, signal, onAudio);

    note(`warm-up: in-process pool, SSE and WebSocket (${WARMUP_SECONDS} s each), ${workers} workers`);
    await streamSlice(engine, 2 * workers, WARMUP_SECONDS, process.pid);
    await streamSlice(sse, 2 * workers, WARMUP_SECONDS, server.pid);
    await streamSlice(ws, 2 * workers, 1, server.pid);

    for (const concurrency of CONCURRENCIES) {
      note(`concurrency ${concurrency}: ${roundCount} rounds of ${seconds} s slices, engine between every served slice`);
      const result = await interleave<StreamSlice, StreamSlice>(
        async () => {
          const slice = await streamSlice(engine, concurrency, seconds, process.pid, { leadInSeconds: LEAD_IN_SECONDS });
          return { rate: slice.audioSeconds / slice.seconds, data: slice };
        },
        [
          { id: PATHS.sse, run: async () => asSlice(await streamSlice(sse, concurrency, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS })) },
          { id: PATHS.ws, run: async () => asSlice(await streamSlice(ws, concurrency, seconds, server.pid, { leadInSeconds: LEAD_IN_SECONDS })) },
        ],
        roundCount,
      );
      rows.push({ concurrency, path: PATHS.engine, slices: result.reference, deltas: [], ratios: [] });
      const p50 = (slice: Slice<StreamSlice>) => percentile(slice.data.firstAudio, 50);
      for (const [id, candidate] of result.candidates) {
        const deltas = candidate.slices.map((slice, i) => {
          const [before, after] = candidate.around[i];
          return p50(slice) - (p50(result.reference[before]) + p50(result.reference[after])) / 2;
        });
        rows.push({ concurrency, path: id, slices: candidate.slices, deltas, ratios: candidate.ratios });
      }
    }
  } finally {
    for (const socket of sockets) socket.close();
    agent.destroy();
    await pool?.stop();
    lifetimePeak = (await server.stop()).peakRssMiB;
  }

  const cells: Cell[][] = [];
  const summary = new Map<string, { p50: number; p99: number; delta: number; rss: number; together: number[] }>();
  for (const row of rows) {
    const data = row.slices.map((s) => s.data);
    const firstAudio = data.flatMap((s) => s.firstAudio).sort((a, b) => a - b);
    const together = data.flatMap((s) => s.together).sort((a, b) => a - b);
    const usage = combineUsage(data.map((s) => s.usage));
    const audio = data.reduce((n, s) => n + s.audioSeconds, 0);
    const wall = data.reduce((n, s) => n + s.seconds, 0);
    const failed = data.reduce((n, s) => n + s.failed, 0);
    const engineRow = row.path === PATHS.engine;
    if (failed) notes.push(`${row.path} at concurrency ${row.concurrency}: ${failed} failed requests.`);
    const used = cores(usage);
    const clientCpu = data.reduce((n, s) => n + s.clientCpuSeconds, 0);
    summary.set(`${row.concurrency} ${row.path}`, {
      p50: percentile(firstAudio, 50),
      p99: percentile(firstAudio, 99),
      delta: median(row.deltas),
      rss: usage.peakRssMiB,
      together,
    });
    cells.push([
      row.concurrency,
      row.path,
      firstAudio.length,
      num(percentile(firstAudio, 50), 1),
      num(percentile(firstAudio, 99), 1),
      `${num(percentile(together, 50), 1)} / ${num(together.at(-1) ?? NaN, 1)}`,
      engineRow ? '—' : `${num(median(row.deltas), 1)} (${spread(row.deltas, 1)})`,
      num(audio / wall, 1),
      engineRow ? '1.00' : `${num(median(row.ratios), 2)} (${spread(row.ratios)})`,
      num(used.all, 2),
      num(used.main, 2),
      engineRow ? '—' : num(clientCpu / usage.wallSeconds, 2),
      num(otherLoad(usage, engineRow ? 0 : clientCpu), 2),
      engineRow ? '—' : num(usage.peakRssMiB, 0),
    ]);
  }
  const table = markdownTable(
    [
      'Concurrency',
      'Path',
      'Requests',
      'First audio p50 ms',
      'First audio p99 ms',
      'Streams starting together: first audio p50 / max ms',
      'p50 − engine p50, ms (median, range per slice)',
      'Audio s / wall s',
      'Ratio vs engine (median, range)',
      'CPU (cores)',
      'Main thread (cores)',
      'Client CPU (cores)',
      'Other load on machine (cores)',
      'Server peak RSS (MiB)',
    ],
    cells,
  );

  const top = Math.max(...CONCURRENCIES);
  const verdicts: string[] = [];
  const mark = (ok: boolean) => `**${ok ? 'MET' : 'MISSED'}**`;
  for (const path of [PATHS.sse, PATHS.ws]) {
    const low = summary.get(`1 ${path}`)!;
    const high = summary.get(`${top} ${path}`)!;
    verdicts.push(
      `${path}: first audio at concurrency 1 is ${num(low.delta, 1)} ms after the engine's first chunk (target ≤ ${TARGET_OVERHEAD_MS} ms) — ${mark(low.delta <= TARGET_OVERHEAD_MS)}`,
      `${path}: p99 first audio at concurrency ${top} is ${num(high.p99, 1)} ms (target ≤ ${TARGET_P99_MS} ms) — ${mark(high.p99 <= TARGET_P99_MS)}; the engine's own p99 there is ${num(summary.get(`${top} ${PATHS.engine}`)!.p99, 1)} ms`,
    );
  }
  const herd = (path: string) => summary.get(`${top} ${path}`)!.together;
  verdicts.push(
    `${top} streams starting in the same millisecond (no target): first audio p50 / max ${[PATHS.engine, PATHS.sse, PATHS.ws].map((path) => `${num(percentile(herd(path), 50), 1)} / ${num(herd(path).at(-1) ?? NaN, 1)} ms (${path === PATHS.engine ? 'engine' : path})`).join(', ')}`,
  );
  const rssTop = Math.max(summary.get(`${top} ${PATHS.sse}`)!.rss, summary.get(`${top} ${PATHS.ws}`)!.rss);
  verdicts.push(`Server peak RSS with ${top} open streams: ${num(rssTop, 0)} MiB (target ≤ ${TARGET_RSS_MIB} MiB) — ${mark(rssTop <= TARGET_RSS_MIB)}`);

  const markdown = [
    `### Streaming latency (one-sentence transcripts, raw pcm_s16le ${NATIVE_RATE} Hz, accounts off, ${workers} eSpeak workers; per concurrency ${roundCount} slices of ${seconds} s per served path after a ${LEAD_IN_SECONDS} s lead-in, interleaved with the engine)`,
    '',
    table,
    '',
    ...verdicts.map((v) => `- ${v}`),
    '- First audio: from sending the request (SSE) or the context\'s message (WebSocket, connection already open) to the arrival of the first complete `chunk` event; for the engine, from `synthesize()` to its first chunk.',
    `- First audio p50/p99: requests sent inside the measured window, after the streams have run for ${LEAD_IN_SECONDS} s. Streams starting together: the first request of every stream of a slice, all sent in the same millisecond.`,
    '- p50 − engine p50 = median over slices of (the slice\'s p50 − mean p50 of the engine slices just before and after it).',
    '- CPU and main thread: the server child for served rows; this process (pool workers + its main thread, which also runs the loop) for engine rows. Client CPU: the SSE and WebSocket clients, in this process, on the same cores.',
    `- Server lifetime peak RSS (VmHWM): ${num(lifetimePeak, 0)} MiB.`,
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { markdown };
}

function asSlice(slice: StreamSlice): Slice<StreamSlice> {
  return { rate: slice.audioSeconds / slice.seconds, data: slice };
}

if (isMain(import.meta.url)) {
  const report = await runStreamingLatency();
  console.log(report.markdown);
}
