/**
 * @module bench/deepgram
 * The Deepgram dialect against the native one, in the same run on the same
 * server child (accounts off, eSpeak NG): **first audio at 64 streams** of
 * `wss /v1/speak` (one long-lived socket per stream, as Pipecat and LiveKit
 * keep one: `Speak` then `Flush` per utterance, done at its `Flushed`; a slice's
 * end is a `Clear`) and the native `/tts/websocket` (one long-lived socket, a
 * context per utterance), the same model (`voicegate-1.0`, voice `sarah`) and
 * format (s16 at 24 kHz), slices alternating. Target: the p99 within 2 ms of the
 * native p99 (the median of the slices' differences).
 *
 * Run: `npm run build && node dist/bench/deepgram.js` (`BENCH_SECONDS`,
 * `BENCH_ROUNDS` as the others).
 */
import { WebSocket, type RawData } from 'ws';
import { startChild, type ChildServer } from './lib/child.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num } from './lib/table.js';
import { WsStream, streamSlice, type StreamClient } from './streaming-latency.js';

const STREAMS = 64;
export const TARGET_P99_DELTA_MS = 2;
const RATE = 24000;

/** One `/v1/speak` socket: an utterance at a time, its audio the binary frames before its `Flushed`. */
class DeepgramStream {
  private current: { onAudio: (bytes: number) => void; done: () => void } | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: RawData, binary: boolean) => {
      const current = this.current;
      if (!current) return;
      if (binary) return current.onAudio((data as Buffer).length);
      if ((data as Buffer).includes('"Flushed"')) {
        this.current = null;
        current.done();
      }
    });
  }

  static open(url: string): Promise<DeepgramStream> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/speak?model=aura-2-sarah-en&encoding=linear16&sample_rate=${RATE}`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new DeepgramStream(ws)));
      ws.once('error', reject);
    });
  }

  speak(text: string, signal: AbortSignal, onAudio: (bytes: number) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const stop = () => {
        this.current = null;
        this.ws.send('{"type":"Clear"}');
        resolve();
      };
      signal.addEventListener('abort', stop, { once: true });
      this.current = { onAudio, done: () => (signal.removeEventListener('abort', stop), resolve()) };
      this.ws.send(JSON.stringify({ type: 'Speak', text }));
      this.ws.send('{"type":"Flush"}');
    });
  }

  close(): void {
    this.ws.close();
  }
}

const nativeBody = (text: string, contextId: string) => ({
  model_id: 'voicegate-1.0',
  transcript: text,
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE },
  context_id: contextId,
  continue: false,
});

export async function runDeepgramBench(): Promise<{ markdown: string }> {
  const seconds = sliceSeconds(4);
  const roundCount = rounds(3);
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  note('deepgram: starting the Voicegate child');
  const server: ChildServer = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false } })]);
  const sockets: WsStream[] = [];
  const streams: DeepgramStream[] = [];
  try {
    for (let i = 0; i < STREAMS; i++) {
      sockets.push(await WsStream.open(server.url, nativeBody));
      streams.push(await DeepgramStream.open(server.url));
    }
    const paths: [string, StreamClient][] = [
      ['WebSocket /tts/websocket', (stream, text, signal, onAudio) => sockets[stream].speak(text, signal, onAudio)],
      ['Deepgram wss /v1/speak', (stream, text, signal, onAudio) => streams[stream].speak(text, signal, onAudio)],
    ];
    for (const [, client] of paths) await streamSlice(client, STREAMS, 2, server.pid, { leadInSeconds: 0 });
    const p99 = paths.map((): number[] => []);
    const failed = paths.map(() => 0);
    for (let round = 0; round < roundCount; round++) {
      for (const [i, [name, client]] of paths.entries()) {
        note(`deepgram: round ${round + 1}, ${name}`);
        const slice = await streamSlice(client, STREAMS, seconds, server.pid, { leadInSeconds: 1 });
        p99[i].push(percentile(slice.firstAudio, 99));
        failed[i] += slice.failed;
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const delta = median(p99[1].map((value, i) => value - p99[0][i]));
    const markdown = [
      '### Deepgram dialect',
      '',
      `First audio at ${STREAMS} streams (${roundCount} rounds of ${seconds} s slices, alternating):`,
      '',
      markdownTable(['path', 'first-audio p99 per slice (ms)', 'failed'], paths.map(([name], i) => [name, p99[i].map((v) => num(v, 1)).join(', '), failed[i]])),
      '',
      `/v1/speak p99 − native p99 (median of slices): ${num(delta, 2)} ms (target ≤ ${TARGET_P99_DELTA_MS}) — **${delta <= TARGET_P99_DELTA_MS ? 'MET' : 'MISSED'}**`,
      ...notes.map((n) => `\n${n}`),
    ].join('\n');
    return { markdown };
  } finally {
    for (const socket of sockets) socket.close();
    for (const stream of streams) stream.close();
    await server.stop();
  }
}

if (isMain(import.meta.url)) {
  const report = await runDeepgramBench();
  console.log(report.markdown);
}
