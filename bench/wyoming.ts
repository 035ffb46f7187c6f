/**
 * @module bench/wyoming
 * The Wyoming listener against the native WebSocket, in the same run on the
 * same server child (accounts off, eSpeak NG, `gepard-1.0`, voice `sarah`,
 * s16 at 22,050 Hz), slices alternating:
 *
 * - **First audio** at concurrency 1 and 32: a one-shot `synthesize` on a new
 *   connection per utterance (as Home Assistant sends it), and a one-sentence
 *   stream (`synthesize-start`, `-chunk`, the compat `synthesize`,
 *   `synthesize-stop`, all sent together, so the clock runs from the stop),
 *   against a context on the native `/tts/websocket` (one long-lived socket per
 *   stream). Target: the median within 3 ms of the native median.
 * - **Audio throughput** at 32 connections: audio seconds delivered per wall
 *   second over the same windows. Target ≥ 0.9 of the native WebSocket's.
 *
 * Run: `npm run build && node dist/bench/wyoming.js` (`BENCH_SLICE_SECONDS`,
 * `BENCH_ROUNDS` as the others).
 */
import { connect } from 'node:net';
import { EventDecoder } from '../src/api/dialects/wyoming/framing.js';
import { startChild, type ChildServer } from './lib/child.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict } from './lib/table.js';
import { WsStream, streamSlice, type StreamClient, type StreamSlice } from './streaming-latency.js';

export const CONCURRENCIES = [1, 32];
export const TARGET_DELTA_MS = 3;
export const TARGET_THROUGHPUT_RATIO = 0.9;
const RATE = 22050;

const nativeBody = (text: string, contextId: string) => ({
  model_id: 'gepard-1.0',
  transcript: text,
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE },
  context_id: contextId,
  continue: false,
});

/** An event as the reference writer frames it (data in the data block). */
function frame(type: string, data?: Record<string, unknown>): Buffer {
  if (!data) return Buffer.from(JSON.stringify({ type }) + '\n');
  const block = Buffer.from(JSON.stringify(data));
  return Buffer.concat([Buffer.from(JSON.stringify({ type, data_length: block.length }) + '\n'), block]);
}

/** One utterance on a new connection: `streamed` sends it as a one-sentence stream, else as one `synthesize`. */
function wyomingClient(port: number, streamed: boolean): StreamClient {
  return (_stream, text, signal, onAudio) =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.setNoDelay(true);
      const decoder = new EventDecoder();
      const end = streamed ? 'synthesize-stopped' : 'audio-stop';
      const stop = () => {
        socket.destroy();
        reject(signal.reason);
      };
      signal.addEventListener('abort', stop, { once: true });
      socket.on('error', (err) => (signal.removeEventListener('abort', stop), reject(err)));
      socket.on('data', (chunk: Buffer) => {
        for (const event of decoder.push(chunk)) {
          if (event.type === 'audio-chunk') onAudio(event.payload?.length ?? 0);
          else if (event.type === 'error') {
            signal.removeEventListener('abort', stop);
            socket.destroy();
            reject(new Error(`error event: ${JSON.stringify(event.data)}`));
          } else if (event.type === end) {
            signal.removeEventListener('abort', stop);
            socket.end();
            resolve();
          }
        }
      });
      socket.write(
        streamed
          ? Buffer.concat([frame('synthesize-start'), frame('synthesize-chunk', { text }), frame('synthesize', { text }), frame('synthesize-stop')])
          : frame('synthesize', { text }),
      );
    });
}

export interface WyomingReport {
  markdown: string;
  worstDeltaMs: number;
  throughputRatio: number;
}

export async function runWyomingBench(): Promise<WyomingReport> {
  const seconds = sliceSeconds(2);
  const roundCount = rounds(3);
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  note('wyoming: starting the Voicegate child');
  const server: ChildServer = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false }, wyoming: { port: 0 } })]);
  const port = server.ready.wyomingPort as number;
  const sockets: WsStream[] = [];
  try {
    for (let i = 0; i < Math.max(...CONCURRENCIES); i++) sockets.push(await WsStream.open(server.url, nativeBody));
    const paths: [string, StreamClient][] = [
      ['WebSocket /tts/websocket', (stream, text, signal, onAudio) => sockets[stream].speak(text, signal, onAudio)],
      ['Wyoming synthesize', wyomingClient(port, false)],
      ['Wyoming stream (first audio after synthesize-stop)', wyomingClient(port, true)],
    ];
    for (const [, client] of paths) await streamSlice(client, 8, 2, server.pid, { leadInSeconds: 0 });
    const rows: (string | number)[][] = [];
    const deltas: number[] = [];
    let throughputRatio = Infinity;
    for (const concurrency of CONCURRENCIES) {
      const slices = new Map<string, StreamSlice[]>(paths.map(([name]) => [name, []]));
      for (let round = 0; round < roundCount; round++) {
        for (const [name, client] of paths) {
          note(`wyoming: ${concurrency} streams, round ${round + 1}, ${name}`);
          slices.get(name)!.push(await streamSlice(client, concurrency, seconds, server.pid, { leadInSeconds: 1 }));
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const of = (name: string) => {
        const list = slices.get(name)!;
        return {
          p50: median(list.map((s) => percentile(s.firstAudio, 50))),
          p99: median(list.map((s) => percentile(s.firstAudio, 99))),
          rate: median(list.map((s) => s.audioSeconds / s.seconds)),
          failed: list.reduce((n, s) => n + s.failed, 0),
        };
      };
      const native = of(paths[0][0]);
      for (const [name] of paths) {
        const row = of(name);
        if (name !== paths[0][0]) {
          deltas.push(row.p50 - native.p50);
          if (concurrency === 32) throughputRatio = Math.min(throughputRatio, row.rate / native.rate);
        }
        rows.push([concurrency, name, num(row.p50, 1), num(row.p99, 1), num(row.p50 - native.p50, 1), num(row.rate, 1), num(row.rate / native.rate, 2), row.failed]);
      }
    }
    const worstDeltaMs = Math.max(...deltas);
    const markdown = [
      '## Wyoming',
      '',
      markdownTable(['streams', 'path', 'first audio p50 ms', 'p99 ms', 'p50 − native ms', 'audio s/s', '× native', 'failed'], rows),
      '',
      `Worst first-audio median over the native WebSocket's: ${num(worstDeltaMs, 1)} ms (target ≤ +${TARGET_DELTA_MS} ms) — **${worstDeltaMs <= TARGET_DELTA_MS ? 'MET' : 'MISSED'}**`,
      '',
      verdict('Audio throughput at 32 connections, × the native WebSocket', throughputRatio, TARGET_THROUGHPUT_RATIO),
      ...notes.map((n) => `\n${n}`),
    ].join('\n');
    return { markdown, worstDeltaMs, throughputRatio };
  } finally {
    for (const socket of sockets) socket.close();
    await server.stop();
  }
}

if (isMain(import.meta.url)) {
  const report = await runWyomingBench();
  process.stdout.write(report.markdown + '\n');
}
