/**
 * @module bench/elevenlabs
 * The ElevenLabs dialect against the native one, in the same run on the same
 * server child (accounts off, eSpeak NG):
 *
 * - **First audio at 64 streams**: ElevenLabs' `stream-input` (one socket per
 *   utterance, as its clients use it: `{"text": " "}`, the text with `flush`,
 *   `{"text": ""}`; each stream keeps its next socket open ahead, as a
 *   low-latency client does, so connection setup is not in the figure) and the
 *   native `/tts/websocket` (one long-lived socket, one context per
 *   utterance), the same model (`voicegate-1.0`) and format (s16 at 22,050 Hz),
 *   slices alternating. Target: the p99 within 2 ms of the native p99.
 * - **Streamed MP3 and Opus throughput**: audio seconds per wall second of
 *   `POST /v1/text-to-speech/{voice}/stream` at saturation for `pcm_22050`,
 *   `mp3_44100_128` and `opus_48000_64`, against raw PCM plus the encoder
 *   alone: 1 / (1 / PCM's rate + the encoder's CPU seconds per audio second,
 *   resampling included, measured in this process, ÷ the cores). Target ≥ 0.9.
 *
 * Run: `npm run build && node dist/bench/elevenlabs.js` (`BENCH_SECONDS`,
 * `BENCH_ROUNDS` as the others).
 */
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import { WebSocket, type RawData } from 'ws';
import { createAudioEncoder } from '../src/audio/encoder.js';
import type { OutputFormat } from '../src/audio/format.js';
import { opusSourceRate } from '../src/audio/opus.js';
import { createResampler } from '../src/audio/resampler.js';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { startChild, type ChildServer } from './lib/child.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict } from './lib/table.js';
import { SENTENCES, WsStream, streamSlice, type StreamClient } from './streaming-latency.js';

const STREAMS = 64;
const LABELS: Record<string, string> = {
  native: 'WebSocket /tts/websocket',
  eleven: 'ElevenLabs stream-input',
  'native with timestamps': 'WebSocket /tts/websocket, add_timestamps',
  'multi-stream-input': 'ElevenLabs multi-stream-input (one socket)',
};
const THROUGHPUT_STREAMS = 8;
export const TARGET_P99_DELTA_MS = 2;
export const TARGET_THROUGHPUT_RATIO = 0.9;
const MODEL = 'voicegate-1.0';
const RATE = 22050;

/** One stream of `stream-input` utterances, its next socket opened while the current one speaks. */
class ElevenLabsStream {
  private spare: Promise<WebSocket> | null = null;

  constructor(private readonly url: string) {}

  private connect(): Promise<WebSocket> {
    const ws = new WebSocket(`${this.url.replace(/^http/, 'ws')}/v1/text-to-speech/sarah/stream-input?model_id=${MODEL}&output_format=pcm_${RATE}`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  }

  speak(text: string, signal: AbortSignal, onAudio: (bytes: number) => void): Promise<void> {
    const socket = this.spare ?? this.connect();
    this.spare = this.connect();
    this.spare.catch(() => {});
    return socket.then(
      (ws) =>
        new Promise<void>((resolve, reject) => {
          const stop = () => ws.terminate();
          signal.addEventListener('abort', stop, { once: true });
          ws.on('message', (data: RawData) => {
            const buffer = data as Buffer;
            if (buffer.toString('latin1', 0, 10) !== '{"audio":"') return;
            const end = buffer.indexOf('"', 10);
            const padding = (buffer[end - 1] === 61 ? 1 : 0) + (buffer[end - 2] === 61 ? 1 : 0);
            onAudio(((end - 10) / 4) * 3 - padding);
          });
          ws.on('close', (code) => {
            signal.removeEventListener('abort', stop);
            if (code === 1000 || signal.aborted) resolve();
            else reject(new Error(`closed ${code}`));
          });
          ws.send('{"text":" "}');
          ws.send(JSON.stringify({ text: `${text} `, flush: true }));
          ws.send('{"text":""}');
        }),
    );
  }

  close(): void {
    void this.spare?.then((ws) => ws.close()).catch(() => {});
  }
}

/** One `multi-stream-input` socket per stream, a context per utterance (to see what a socket per utterance costs). */
class MultiStream {
  private next = 0;
  private current: { id: string; onAudio: (bytes: number) => void; done: () => void } | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => {
      const buffer = data as Buffer;
      const current = this.current;
      if (!current || buffer.lastIndexOf(`"contextId":"${current.id}"`) < 0) return;
      if (buffer.toString('latin1', 0, 10) === '{"audio":"') {
        const end = buffer.indexOf('"', 10);
        const padding = (buffer[end - 1] === 61 ? 1 : 0) + (buffer[end - 2] === 61 ? 1 : 0);
        current.onAudio(((end - 10) / 4) * 3 - padding);
      } else if (buffer.includes('"isFinal":true')) {
        this.current = null;
        current.done();
      }
    });
  }

  static open(url: string): Promise<MultiStream> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/text-to-speech/sarah/multi-stream-input?model_id=${MODEL}&output_format=pcm_${RATE}`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new MultiStream(ws)));
      ws.once('error', reject);
    });
  }

  speak(text: string, signal: AbortSignal, onAudio: (bytes: number) => void): Promise<void> {
    const id = `c${this.next++}`;
    return new Promise<void>((resolve) => {
      const stop = () => {
        if (this.current?.id === id) this.current = null;
        this.ws.send(JSON.stringify({ context_id: id, close_socket: false, close_context: true }));
        resolve();
      };
      signal.addEventListener('abort', stop, { once: true });
      this.current = { id, onAudio, done: () => (signal.removeEventListener('abort', stop), resolve()) };
      this.ws.send(JSON.stringify({ text: ' ', context_id: id }));
      this.ws.send(JSON.stringify({ text: `${text} `, context_id: id, flush: true }));
      this.ws.send(JSON.stringify({ context_id: id, close_context: true }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** streamSlice's clock starts at the call: taking a socket that is still opening counts, as it would for a client. */
function elevenLabsClient(streams: ElevenLabsStream[]): StreamClient {
  return (stream, text, signal, onAudio) => streams[stream].speak(text, signal, onAudio);
}

function nativeClient(sockets: WsStream[]): StreamClient {
  return (stream, text, signal, onAudio) => sockets[stream].speak(text, signal, onAudio);
}

const nativeBody = (text: string, contextId: string) => ({
  model_id: MODEL,
  transcript: text,
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE },
  context_id: contextId,
  continue: false,
});

/** Requests per wall second of back-to-back `/stream` requests (all the same text) on `streams` connections for `seconds`. */
async function throughput(url: string, agent: Agent, format: string, streams: number, seconds: number): Promise<{ rate: number; failed: number }> {
  const text = SENTENCES.join(' ');
  const deadline = performance.now() + seconds * 1000;
  let requests = 0;
  let failed = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      try {
        await new Promise<void>((resolve, reject) => {
          const payload = JSON.stringify({ text, model_id: MODEL });
          const req = request(new URL(`/v1/text-to-speech/sarah/stream?output_format=${format}`, url), { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
            res.on('data', () => {});
            res.on('end', () => resolve());
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end(payload);
        });
        requests++;
      } catch {
        failed++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: streams }, loop));
  return { rate: requests / ((performance.now() - started) / 1000), failed };
}

/** The bytes of one request's PCM (s16 at the engine's rate). */
function pcmBytes(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(`/v1/text-to-speech/sarah/stream?output_format=pcm_${RATE}`, url), { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve(bytes));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ text: SENTENCES.join(' '), model_id: MODEL }));
  });
}

/** The encoder's (and resampler's) CPU seconds per audio second, alone in this process, on the server's path. */
async function encoderCost(pool: EspeakPool, format: OutputFormat): Promise<number> {
  const voice = NAMED_VOICES.find((v) => v.id === 'sarah')!;
  const chunks: Float32Array[] = [];
  for await (const chunk of pool.synthesize({ text: SENTENCES.join(' ').repeat(4), voice, speed: 1, wordTimings: false }, new AbortController().signal)) chunks.push(chunk.samples);
  const audioSeconds = chunks.reduce((n, c) => n + c.length, 0) / pool.sampleRate;
  // The median of five rounds after one to warm up: one round is a few hundred ms, and the clock
  // of a core working alone moves more than that between rounds.
  const perRound: number[] = [];
  for (let round = 0; round < 6; round++) {
    const before = process.cpuUsage();
    // What the server's pipeline does: Opus is encoded from the lowest rate that holds the engine's band.
    const encoded = format.container === 'opus' ? { ...format, sampleRate: opusSourceRate(pool.sampleRate, format.sampleRate) } : format;
    const resampler = encoded.sampleRate === pool.sampleRate ? null : await createResampler(pool.sampleRate, encoded.sampleRate);
    const encoder = await createAudioEncoder(encoded, { streaming: true });
    for (const chunk of chunks) await encoder.encode(resampler ? resampler.process(chunk) : chunk);
    await encoder.end();
    resampler?.destroy();
    encoder.close?.();
    const used = process.cpuUsage(before);
    if (round > 0) perRound.push((used.user + used.system) / 1e6 / audioSeconds);
  }
  return perRound.sort((a, b) => a - b)[Math.floor(perRound.length / 2)];
}

export interface ElevenLabsReport {
  markdown: string;
}

export async function runElevenLabsBench(): Promise<ElevenLabsReport> {
  const seconds = sliceSeconds(4);
  const roundCount = rounds(3);
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  note('elevenlabs: starting the Voicegate child');
  const server: ChildServer = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false } })]);
  const agent = new Agent({ keepAlive: true, maxSockets: THROUGHPUT_STREAMS });
  const sockets: WsStream[] = [];
  const el: ElevenLabsStream[] = [];
  let pool: EspeakPool | null = null;
  try {
    for (let i = 0; i < STREAMS; i++) {
      sockets.push(await WsStream.open(server.url, nativeBody));
      el.push(new ElevenLabsStream(server.url));
    }
    const native = nativeClient(sockets);
    const eleven = elevenLabsClient(el);
    // BENCH_ELEVENLABS_DETAIL=1: two more rows that show where a difference comes from, the native
    // WebSocket with word timestamps (ElevenLabs always aligns) and multi-stream-input (one socket).
    const detail = process.env.BENCH_ELEVENLABS_DETAIL === '1';
    const timed: WsStream[] = [];
    const multi: MultiStream[] = [];
    if (detail) {
      for (let i = 0; i < STREAMS; i++) {
        timed.push(await WsStream.open(server.url, (text, contextId) => ({ ...nativeBody(text, contextId), add_timestamps: true })));
        multi.push(await MultiStream.open(server.url));
      }
    }
    const paths: [string, StreamClient][] = [
      ['native', native],
      ['eleven', eleven],
      ...(detail
        ? ([
            ['native with timestamps', nativeClient(timed)],
            ['multi-stream-input', (stream: number, text: string, signal: AbortSignal, onAudio: (bytes: number) => void) => multi[stream].speak(text, signal, onAudio)],
          ] as [string, StreamClient][])
        : []),
    ];
    // Warm both paths.
    await streamSlice(native, STREAMS, 2, server.pid, { leadInSeconds: 0 });
    await streamSlice(eleven, STREAMS, 2, server.pid, { leadInSeconds: 0 });
    const p99: Record<string, number[]> = Object.fromEntries(paths.map(([name]) => [name, []]));
    const failed: Record<string, number> = Object.fromEntries(paths.map(([name]) => [name, 0]));
    for (let round = 0; round < roundCount; round++) {
      for (const [name, client] of paths) {
        note(`elevenlabs: round ${round + 1}, ${name}`);
        const slice = await streamSlice(client, STREAMS, seconds, server.pid, { leadInSeconds: 1 });
        p99[name].push(percentile(slice.firstAudio, 99));
        failed[name] += slice.failed;
      }
    }
    for (const socket of timed) socket.close();
    for (const socket of multi) socket.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const deltas = p99.eleven.map((value, i) => value - p99.native[i]);
    const delta = median(deltas);

    note('elevenlabs: throughput');
    const formats = [
      { name: 'pcm_22050', format: null },
      { name: 'mp3_44100_128', format: { container: 'mp3', sampleRate: 44100, bitRate: 128000 } as OutputFormat },
      { name: 'opus_48000_64', format: { container: 'opus', sampleRate: 48000, bitRate: 64000 } as OutputFormat },
    ];
    const espeak = (server.ready.engines as { id: string; workers?: number }[]).find((e) => e.id === 'espeak');
    pool = new EspeakPool({ id: 'espeak', workers: espeak?.workers ?? 1, queueLimit: 64, highWater: 32, logger: createLogger('silent') });
    await pool.start();
    const costs = new Map<string, number>();
    for (const { name, format } of formats) if (format) costs.set(name, await encoderCost(pool, format));
    await pool.stop();
    pool = null;
    const rates = new Map<string, number[]>();
    for (let round = 0; round < roundCount; round++) {
      for (const { name } of formats) {
        const { rate } = await throughput(server.url, agent, name, THROUGHPUT_STREAMS, seconds);
        rates.set(name, [...(rates.get(name) ?? []), rate]);
      }
    }
    const cpus = availableParallelism();
    const pcm = median(rates.get('pcm_22050')!);
    // A request's audio, from its PCM: the encoder's cost per audio second × this is its cost per request.
    const perRequest = (await pcmBytes(server.url, agent)) / 2 / RATE;
    const expectedOf = (name: string) => (costs.has(name) ? 1 / (1 / pcm + (costs.get(name)! * perRequest) / cpus) : pcm);
    const throughputRows = formats.map(({ name }) => {
      const rate = median(rates.get(name)!);
      const cost = costs.get(name);
      return [name, num(rate, 2), num(rate * perRequest, 1), cost === undefined ? '—' : num(cost * 1000, 2), num(expectedOf(name), 2), num(rate / expectedOf(name), 2)];
    });
    const ratios = formats.filter((f) => f.format).map(({ name }) => median(rates.get(name)!) / expectedOf(name));

    const firstAudio = markdownTable(
      ['path', 'first-audio p99 per slice (ms)', 'failed'],
      paths.map(([name]) => [LABELS[name] ?? name, p99[name].map((v) => num(v, 1)).join(', '), failed[name]]),
    );
    const markdown = [
      '### ElevenLabs dialect',
      '',
      `First audio at ${STREAMS} streams (${roundCount} rounds of ${seconds} s slices, alternating):`,
      '',
      firstAudio,
      '',
      `stream-input p99 − native p99 (median of slices): ${num(delta, 2)} ms (target ≤ ${TARGET_P99_DELTA_MS}) — **${delta <= TARGET_P99_DELTA_MS ? 'MET' : 'MISSED'}**`,
      '',
      `Streamed throughput on ${THROUGHPUT_STREAMS} connections (requests of ${SENTENCES.join(' ').length} characters back to back, each the same audio; the encoder's cost, resampling included, measured alone in this process and spread over ${availableParallelism()} cores):`,
      '',
      markdownTable(['output_format', 'requests/s', 'audio s/s', 'encoder CPU ms per audio s', 'PCM + encoder alone (requests/s)', 'ratio'], throughputRows),
      '',
      verdict('lowest MP3/Opus ratio', Math.min(...ratios), TARGET_THROUGHPUT_RATIO),
      ...notes.map((n) => `\n${n}`),
    ].join('\n');
    return { markdown };
  } finally {
    for (const socket of sockets) socket.close();
    for (const stream of el) stream.close();
    agent.destroy();
    await pool?.stop();
    await server.stop();
  }
}

if (isMain(import.meta.url)) {
  const report = await runElevenLabsBench();
  console.log(report.markdown);
}
