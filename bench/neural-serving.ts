/**
 * @module bench/neural-serving
 * Local neural serving: the `sherpa-onnx` engine with the compute-realistic
 * stand-in model `vits-proxy-medium` (random weights, the decoder of a Piper
 * "medium" voice; its audio is noise) bound to a model id through config
 * overrides, server in a child process. Four questions, each next to the same
 * engine driven in-process on the same cores:
 *   1. audio seconds per wall second served by POST /tts/bytes (raw s16 at the
 *      native rate, raw μ-law 8 kHz) against a `SherpaEngine` built from the
 *      same config entry (workers × numThreads) at the same concurrency, in
 *      alternating slices (lib/interleave), equal windows as in
 *      serving-efficiency;
 *   2. POST /tts/sse first audio at concurrency 1 against the engine's first
 *      chunk (its first sentence), the two asked in turn, request by request;
 *   3. the server child's peak RSS under that load;
 *   4. real-time factor, aggregate rate and first-sentence latency for
 *      workers × numThreads ∈ {1, 2}², in-process, concurrency = workers;
 *   5. first audio of sentences with and without a head cut off
 *      (`splitFirstSentence`), in-process, concurrency 1, the two in turn.
 * Skips (exit 0) when the model folder is missing: `../shared/models/vits-proxy-medium`
 * beside the repository, or `BENCH_NEURAL_MODEL`.
 * Run: `npm run build && node dist/bench/neural-serving.js` (`BENCH_NEURAL_PARTS=sse,rtf,head`: only those parts; the warm-up always runs).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { Agent } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../src/engines/engine.js';
import { splitHead } from '../src/engines/sentences.js';
import { ensureEspeakData } from '../src/engines/sherpa/espeak-data.js';
import { sherpaEngine } from '../src/engines/sherpa/index.js';
import { createLogger } from '../src/log/logger.js';
import type { Voice } from '../src/voices/voice.js';
import { baselineRow, SERVING_COLUMNS, servedRow, type BaselineSlice } from './lib/serving-rows.js';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { isMain, loadSlice, note, percentile, rounds, runLoad, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { combineUsage, cores, measureProcess, otherLoad, statusMiB, waitForQuiet, type Usage } from './lib/proc.js';
import { markdownTable, num, verdict, type Cell } from './lib/table.js';
import { SENTENCES, sseClient, type StreamClient } from './streaming-latency.js';

/** Served/raw at the native rate. */
export const TARGET_RATIO = 0.9;
/** At concurrency 1, SSE first audio within this many ms of the engine's first chunk (p50 against p50). */
export const TARGET_OVERHEAD_MS = 3;
/** The server child's peak RSS with 2 workers, under load. */
export const TARGET_RSS_MIB = 600;

export const ENGINE_ID = 'vits-proxy';
export const MODEL_ID = 'vits-proxy';
/** The served configuration (targets 1–3): two workers of one thread each, the two cores. */
export const SERVED = { workers: 2, numThreads: 1 };
/** The RTF table's configurations. */
const GRID = [
  { workers: 1, numThreads: 1 },
  { workers: 1, numThreads: 2 },
  { workers: 2, numThreads: 1 },
  { workers: 2, numThreads: 2 },
];
/**
 * Slices are longer than the eSpeak benchmarks' 2 s: one clip here takes 0.3–0.5 s, and a window
 * counts only whole jobs, so a 2 s slice moves by a job's share (~10 %) with where the window cuts.
 */
const DEFAULT_SLICE_SECONDS = 4;
const WARMUP_SECONDS = 2;
/**
 * The first-audio text: two sentences, so first audio is the first sentence while the second is
 * still being made. The first is short: its generation time, and so its jitter, is what the 3 ms
 * comparison has to see through.
 */
const TWO_SENTENCES = 'Thanks for calling. How can I help you today?';
/** The RTF table's text: a first sentence of typical length, then a second. */
const RTF_TEXT = 'Thanks for calling, your order has shipped. It should arrive on Thursday, before noon.';

const PARTS = ['bytes', 'sse', 'rtf', 'head'] as const;

/** The parts `BENCH_NEURAL_PARTS` (a comma list of `bytes`, `sse`, `rtf`, `head`) asks for; all by default. */
export function neuralParts(): Set<(typeof PARTS)[number]> {
  const asked = (process.env.BENCH_NEURAL_PARTS ?? PARTS.join(',')).split(',').map((p) => p.trim());
  return new Set(PARTS.filter((p) => asked.includes(p)));
}

/** Part 5's sentences: voice-agent openers with a clause in their first words, and one without. */
const HEAD_SENTENCES = [
  'Thanks for calling, your order has shipped.',
  'Good morning, how can I help you today?',
  'Sure, I can move your appointment to Friday morning.',
  'Please hold while I transfer you to the next available agent.',
];
/** Part 5: requests per sentence and side. */
const HEAD_REQUESTS = 15;

/** The stand-in model's folder: `BENCH_NEURAL_MODEL`, else `../shared/models/vits-proxy-medium` beside the repository. */
export function neuralModelDir(): string {
  // dist/bench/ → the repository root is two folders up.
  return resolve(process.env.BENCH_NEURAL_MODEL ?? fileURLToPath(new URL('../../../shared/models/vits-proxy-medium', import.meta.url)));
}

interface Format {
  id: string;
  output_format: { container: 'raw'; encoding: 'pcm_s16le' | 'pcm_mulaw'; sample_rate: number };
  bytesPerSample: number;
  primary: boolean;
}

function formats(nativeRate: number): Format[] {
  return [
    { id: `raw pcm_s16le ${nativeRate} Hz (native)`, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: nativeRate }, bytesPerSample: 2, primary: true },
    { id: 'raw pcm_mulaw 8000 Hz', output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }, bytesPerSample: 1, primary: false },
  ];
}

function body(text: string, output_format: Format['output_format']): Record<string, unknown> {
  return { model_id: MODEL_ID, transcript: text, voice: { mode: 'id', id: ENGINE_ID }, output_format };
}

/** The `engines.<id>` entry, the same for the server child and the in-process engines. */
function engineEntry(model: string, shape: { workers: number; numThreads: number }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'sherpa-onnx', model, ...shape, ...extra };
}

/**
 * Config overrides for the child: accounts off (this measures serving, not billing), the model id
 * bound to the engine, and the shipped models rebound to it too, so the child starts no eSpeak pool
 * and its memory and CPU are the neural engine's and the gateway's alone.
 */
export function childOverrides(model: string): Record<string, unknown> {
  return {
    accounts: { enabled: false },
    engines: { [ENGINE_ID]: engineEntry(model, SERVED) },
    models: {
      [MODEL_ID]: { extends: 'gepard-1.0', engine: ENGINE_ID, defaultVoice: ENGINE_ID },
      'gepard-1.0': { engine: ENGINE_ID },
      omnivoice: { engine: ENGINE_ID },
    },
  };
}

/** A `SherpaEngine` made by the engine type's own registration from the same config entry as the child's. */
export async function startEngine(model: string, dataDir: string, shape: { workers: number; numThreads: number }, extra: Record<string, unknown> = {}): Promise<{ engine: Engine; voice: Voice }> {
  const config = sherpaEngine.configSchema.parse(engineEntry(model, shape, extra));
  const engine = sherpaEngine.create(ENGINE_ID, config, { logger: createLogger('silent'), dataDir });
  await engine.start();
  const voice = engine.builtinVoices?.()[0];
  if (!voice) throw new Error('the sherpa engine brought no voice');
  return { engine, voice };
}

/**
 * A model folder the engine reads: the stand-in's files linked in, and eSpeak NG's data (which
 * sherpa phonemizes with) unpacked beside them from the bundled eSpeak NG, so the child and the
 * in-process engines use one folder and the child unpacks nothing at start.
 */
export function prepareModel(source: string, work: string): string {
  const dir = join(work, 'model');
  mkdirSync(dir);
  for (const name of ['model.onnx', 'tokens.txt']) symlinkSync(join(source, name), join(dir, name));
  ensureEspeakData(join(dir, 'espeak-ng-data'));
  return dir;
}

type RawSlice = BaselineSlice;

/**
 * One baseline slice, as in serving-efficiency: `concurrency` loops walking the texts from the
 * start on the engine; only jobs finished within `seconds` count, the rest are cancelled (as
 * autocannon drops requests in flight when its window closes).
 */
async function rawSlice(engine: Engine, voice: Voice, texts: string[], concurrency: number, seconds: number): Promise<RawSlice> {
  const latencies: number[] = [];
  let samples = 0;
  let jobs = 0;
  const controller = new AbortController();
  const watch = measureProcess(process.pid);
  const deadline = performance.now() + seconds * 1000;
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  const loop = async () => {
    for (let i = 0; performance.now() < deadline; i++) {
      const started = performance.now();
      let made = 0;
      try {
        for await (const chunk of engine.synthesize({ text: texts[i % texts.length], voice, speed: 1, wordTimings: false }, controller.signal)) made += chunk.samples.length;
      } catch (err) {
        if (controller.signal.aborted) return;
        throw err;
      }
      const finished = performance.now();
      if (finished > deadline) return;
      samples += made;
      jobs++;
      latencies.push(finished - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  clearTimeout(timer);
  return { jobs, audioSeconds: samples / engine.sampleRate, seconds, latencies: latencies.sort((a, b) => a - b), usage: watch.stop() };
}

/** Audio seconds the engine makes for each text, one at a time. */
async function engineLengths(engine: Engine, voice: Voice, texts: string[]): Promise<number[]> {
  const lengths: number[] = [];
  for (const text of texts) {
    let samples = 0;
    for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) samples += chunk.samples.length;
    lengths.push(samples / engine.sampleRate);
  }
  return lengths;
}

/** Fetches every text once in `format` and checks its length against the engine's. */
async function preflight(server: ChildServer, format: Format, texts: string[], expected: number[]): Promise<string[]> {
  const mismatches: string[] = [];
  for (const [i, text] of texts.entries()) {
    const res = await fetch(`${server.url}/tts/bytes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(text, format.output_format)) });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`preflight ${format.id}: HTTP ${res.status} ${bytes.toString('utf8').slice(0, 200)}`);
    const seconds = bytes.length / format.bytesPerSample / format.output_format.sample_rate;
    if (!(Math.abs(seconds - expected[i]) <= 0.01 * expected[i])) {
      mismatches.push(`"${text.slice(0, 24)}…": served ${num(seconds, 3)} s, engine ${num(expected[i], 3)} s`);
    }
  }
  return mismatches;
}

function engineClient(engine: Engine, voice: Voice): StreamClient {
  return async (_stream, text, signal, onAudio) => {
    for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, signal)) onAudio(chunk.samples.length * 2);
  };
}

interface RtfSlice {
  jobs: number;
  /** Wall time of each job ÷ its audio seconds, sorted. */
  rtf: number[];
  /** Time from `synthesize()` to the first chunk (the first sentence), ms, sorted. */
  firstSentence: number[];
  /** Σ over loops of (audio it finished ÷ time to its last finish). */
  rate: number;
  usage: Usage;
}

/**
 * One slice of the RTF table: `concurrency` loops of back-to-back jobs on `text`. A job in flight
 * when the window closes is cancelled (unless it is its loop's first, which is let finish), and each
 * loop's rate is its audio over the time to its last finished job: a job runs ~0.5 s here, and
 * counting whole jobs in a fixed window would move the rate by a job's share.
 */
async function rtfSlice(engine: Engine, voice: Voice, text: string, concurrency: number, seconds: number): Promise<RtfSlice> {
  const rtf: number[] = [];
  const firstSentence: number[] = [];
  const watch = measureProcess(process.pid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async (): Promise<number> => {
    let audio = 0;
    let last = started;
    let finished = 0;
    while (performance.now() < deadline) {
      const controller = new AbortController();
      const timer = finished > 0 ? setTimeout(() => controller.abort(), Math.max(0, deadline - performance.now())) : undefined;
      const begun = performance.now();
      let first = 0;
      let samples = 0;
      try {
        for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, controller.signal)) {
          if (!first) first = performance.now() - begun;
          samples += chunk.samples.length;
        }
      } catch (err) {
        if (controller.signal.aborted) break;
        throw err;
      } finally {
        clearTimeout(timer);
      }
      const now = performance.now();
      const made = samples / engine.sampleRate;
      rtf.push((now - begun) / 1000 / made);
      firstSentence.push(first);
      audio += made;
      last = now;
      finished++;
    }
    return audio / ((last - started) / 1000);
  };
  const rates = await Promise.all(Array.from({ length: concurrency }, loop));
  return {
    jobs: rtf.length,
    rtf: rtf.sort((a, b) => a - b),
    firstSentence: firstSentence.sort((a, b) => a - b),
    rate: rates.reduce((n, r) => n + r, 0),
    usage: watch.stop(),
  };
}

/**
 * Waits (at most `timeoutMs`) until `busy()` says no worker is generating. A cancelled job's worker
 * finishes the sentence it is on, and sherpa-onnx ends the whole process natively (exit 134) when a
 * worker is terminated inside a generation, so no engine or server is stopped before this.
 */
export async function whenIdle(busy: () => Promise<number>, timeoutMs = 10_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while ((await busy()) > 0 && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

export const engineBusy = (engine: Engine) => async () => {
  const info = engine.info() as { busy?: number; queued?: number };
  return (info.busy ?? 0) + (info.queued ?? 0);
};

/** Busy workers and queued jobs of the child's engines, from `/readyz`. */
export const serverBusy = (server: ChildServer) => async () => {
  try {
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { engines?: { busy?: number; queued?: number }[] };
    return (ready.engines ?? []).reduce((n, e) => n + (e.busy ?? 0) + (e.queued ?? 0), 0);
  } catch {
    return 0;
  }
};

export interface NeuralReport {
  markdown: string;
  /** served/raw for the native-rate row (median over slices). */
  ratio: number;
}

/** Runs the benchmark; resolves with null (after saying why) when the stand-in model is not there. */
export async function runNeuralServing(): Promise<NeuralReport | null> {
  const source = neuralModelDir();
  if (!existsSync(join(source, 'model.onnx')) || !existsSync(join(source, 'tokens.txt'))) {
    note(`neural serving: skipped, no stand-in model (model.onnx, tokens.txt) in ${source}; set BENCH_NEURAL_MODEL to its folder`);
    return null;
  }
  const seconds = sliceSeconds(DEFAULT_SLICE_SECONDS);
  const parts = neuralParts();
  const servedRounds = rounds(3);
  const gridRounds = rounds(2);
  const notes: string[] = [];
  const work = mkdtempSync(join(tmpdir(), 'voicegate-neural-bench-'));
  let server: ChildServer | null = null;
  const engines: Engine[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const servedRows: Cell[][] = [];
  const sseRows: Cell[][] = [];
  const gridRows: Cell[][] = [];
  const headRows: Cell[][] = [];
  let ratio = NaN;
  let cpuRatio = NaN;
  let sseDelta = NaN;
  let peakUnderLoad = NaN;
  let lifetimePeak = NaN;
  let idleRss = NaN;
  let warmRss = NaN;
  let nativeRate = 0;
  const connections = 2 * SERVED.workers;
  try {
    const model = prepareModel(source, work);
    const waited = await waitForQuiet();
    if (waited === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
    note(`neural serving: starting the Voicegate child (${SERVED.workers} workers × ${SERVED.numThreads} thread, model ${source})`);
    server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(childOverrides(model))], 120_000);
    const served = (server.ready.engines as { id: string; ready?: boolean; workers?: number; error?: string; sampleRate?: number }[]).find((e) => e.id === ENGINE_ID);
    if (!served?.ready) throw new Error(`the server child's ${ENGINE_ID} engine is not ready${served?.error ? `: ${served.error}` : ''}`);
    if (served.workers !== SERVED.workers) throw new Error(`the server child reports ${served.workers} workers, not ${SERVED.workers}`);
    idleRss = statusMiB(server.pid, 'VmRSS');

    const base = await startEngine(model, work, SERVED);
    engines.push(base.engine);
    nativeRate = base.engine.sampleRate;
    const FORMATS = formats(nativeRate);
    // After every slice its side finishes the sentences cancelled at the window's end before the next slice starts.
    const live = server;
    const engineIdle = () => whenIdle(engineBusy(base.engine));
    const serverIdle = () => whenIdle(serverBusy(live));

    // 1. Whole clips against the raw engine.
    note(`warm-up: in-process engine and server (${WARMUP_SECONDS} s each), concurrency ${connections}`);
    await rawSlice(base.engine, base.voice, SENTENCES, connections, WARMUP_SECONDS);
    await engineIdle();
    const lengths = await engineLengths(base.engine, base.voice, SENTENCES);
    const options = new Map<string, LoadOptions>();
    for (const format of FORMATS) {
      const mismatches = await preflight(server, format, SENTENCES, lengths);
      if (mismatches.length) notes.push(`Audio length check failed for ${format.id}: ${mismatches.join('; ')}`);
      const load: LoadOptions = { url: server.url, path: '/tts/bytes', bodies: SENTENCES.map((t) => body(t, format.output_format)), connections, seconds };
      options.set(format.id, load);
      await runLoad({ ...load, seconds: format.primary ? WARMUP_SECONDS : 1 });
      await serverIdle();
    }
    // The warm-up included the voice's one loudness measurement (a long reference passage).
    warmRss = statusMiB(server.pid, 'VmRSS');
    const audioSeconds = (format: Format, load: { bodyBytes: number }) => load.bodyBytes / format.bytesPerSample / format.output_format.sample_rate;

    const peaks: number[] = [];
    if (parts.has('bytes')) {
      note(`POST /tts/bytes: ${servedRounds} rounds of ${seconds} s slices, the engine between every served slice`);
      const clips = await interleave<RawSlice, LoadSlice>(
        async () => {
          const slice = await rawSlice(base.engine, base.voice, SENTENCES, connections, seconds);
          await engineIdle();
          return { rate: slice.audioSeconds / slice.seconds, data: slice };
        },
        FORMATS.map((format) => ({
          id: format.id,
          run: async (): Promise<Slice<LoadSlice>> => {
            const slice = await loadSlice(live.pid, options.get(format.id)!);
            await serverIdle();
            return { rate: audioSeconds(format, slice.load) / slice.load.seconds, data: slice };
          },
        })),
        servedRounds,
      );

      const baseline = baselineRow('SherpaEngine in-process (baseline)', `native ${nativeRate} Hz`, clips.reference.map((s) => s.data), clips.reference.map((s) => s.rate), 1);
      servedRows.push(baseline.row);
      for (const format of FORMATS) {
        const { slices, ratios } = clips.candidates.get(format.id)!;
        const served = servedRow(format.id, slices, ratios, baseline.perCpu, (load) => audioSeconds(format, load), 1);
        peaks.push(served.usage.peakRssMiB);
        if (format.primary) {
          ratio = served.ratio;
          cpuRatio = served.cpuRatio;
        }
        if (served.load.failed) notes.push(`${format.id}: ${served.load.failed} failed requests (non-2xx, errors or timeouts).`);
        servedRows.push(served.row);
      }
    }

    // 2. SSE first audio against the engine's first chunk, one stream, request by request.
    if (parts.has('sse')) {
      const engineStream = engineClient(base.engine, base.voice);
      const sse = sseClient(server.url, agent, (text) => body(text, FORMATS[0].output_format));
      note(`warm-up: engine and SSE at concurrency 1 (1 s)`);
      await pairedSlice(engineStream, sse, 1, server.pid);
      note(`POST /tts/sse at concurrency 1: ${servedRounds} slices of ${seconds} s, an engine request before every served one`);
      const slices: PairedSlice[] = [];
      for (let round = 0; round < servedRounds; round++) slices.push(await pairedSlice(engineStream, sse, seconds, server.pid));
      await engineIdle();
      await serverIdle();
      // Each served request against the engine request just before it: the median over all pairs, and each slice's.
      const pairs = slices.flatMap((slice) => slice.pairs);
      const deltas = slices.map((slice) => median(slice.pairs));
      sseDelta = median(pairs);
      const server_ = combineUsage(slices.map((slice) => slice.server));
      const bench = combineUsage(slices.map((slice) => slice.bench));
      const other = Math.max(0, bench.machineCpuSeconds - bench.cpuSeconds - server_.cpuSeconds) / bench.wallSeconds;
      const failed = slices.reduce((n, slice) => n + slice.failed, 0);
      if (failed) notes.push(`SSE first audio: ${failed} failed requests.`);
      peaks.push(server_.peakRssMiB);
      for (const engineRow of [true, false]) {
        const firstAudio = slices.flatMap((slice) => (engineRow ? slice.engine : slice.served)).sort((a, b) => a - b);
        sseRows.push([
          engineRow ? 'SherpaEngine in-process (first chunk)' : 'POST /tts/sse (child process)',
          firstAudio.length,
          num(percentile(firstAudio, 50), 1),
          num(percentile(firstAudio, 99), 1),
          engineRow ? '—' : num(percentile(firstAudio, 50) - percentile(slices.flatMap((slice) => slice.engine).sort((a, b) => a - b), 50), 1),
          engineRow ? '—' : `${num(sseDelta, 1)} (${spread(deltas, 1)})`,
          engineRow ? '—' : num(cores(server_).all, 2),
          engineRow ? '—' : num(cores(server_).main, 2),
          engineRow ? '—' : num(other, 2),
          engineRow ? '—' : num(server_.peakRssMiB, 0),
        ]);
      }
    }
    peakUnderLoad = peaks.length ? Math.max(...peaks) : NaN;
    await whenIdle(serverBusy(server));
    lifetimePeak = (await server.stop()).peakRssMiB;
    server = null;

    // 4. Threads × workers, in-process; the served shape's engine is reused.
    if (parts.has('rtf')) {
      note(`RTF table: starting ${GRID.length - 1} more engines`);
      const grid = new Map<string, { engine: Engine; voice: Voice }>();
      for (const shape of GRID) {
        const key = `${shape.workers}×${shape.numThreads}`;
        if (shape.workers === SERVED.workers && shape.numThreads === SERVED.numThreads) grid.set(key, base);
        else {
          const started = await startEngine(model, work, shape);
          engines.push(started.engine);
          grid.set(key, started);
        }
        const { engine, voice } = grid.get(key)!;
        await rtfSlice(engine, voice, RTF_TEXT, shape.workers, 1);
        await whenIdle(engineBusy(engine));
    }
    const run = (shape: (typeof GRID)[number]) => async (): Promise<Slice<RtfSlice>> => {
      const { engine, voice } = grid.get(`${shape.workers}×${shape.numThreads}`)!;
      const slice = await rtfSlice(engine, voice, RTF_TEXT, shape.workers, seconds);
      await whenIdle(engineBusy(engine));
      return { rate: slice.rate, data: slice };
    };
    note(`RTF table: ${gridRounds} rounds of ${seconds} s slices per shape, 1 worker × 1 thread between every other slice`);
    const table = await interleave<RtfSlice, RtfSlice>(
      run(GRID[0]),
      GRID.slice(1).map((shape) => ({ id: `${shape.workers}×${shape.numThreads}`, run: run(shape) })),
      gridRounds,
    );
    for (const shape of GRID) {
      const key = `${shape.workers}×${shape.numThreads}`;
      const reference = shape === GRID[0];
      const slices = reference ? table.reference : table.candidates.get(key)!.slices;
      const ratios = reference ? [] : table.candidates.get(key)!.ratios;
      const data = slices.map((s) => s.data);
      const rtf = data.flatMap((s) => s.rtf).sort((a, b) => a - b);
      const first = data.flatMap((s) => s.firstSentence).sort((a, b) => a - b);
      const usage = combineUsage(data.map((s) => s.usage));
      gridRows.push([
        shape.workers,
        shape.numThreads,
        shape.workers * shape.numThreads,
        rtf.length,
        num(percentile(rtf, 50), 3),
        num(percentile(rtf, 99), 3),
        num(median(slices.map((s) => s.rate)), 1),
        reference ? '1.00' : `${num(median(ratios), 2)} (${spread(ratios)})`,
        num(percentile(first, 50), 1),
        num(percentile(first, 99), 1),
        num(cores(usage).all, 2),
        num(otherLoad(usage), 2),
      ]);
      }
    }

    // 5. First audio with a head cut off and with sentences whole, the same sentences in turn.
    if (parts.has('head')) {
      note(`first sentence as a head: ${HEAD_REQUESTS} requests per sentence and side, in-process, concurrency 1`);
      const whole = await startEngine(model, work, SERVED, { splitFirstSentence: false });
      engines.push(whole.engine);
      const firstAudio = async ({ engine, voice }: { engine: Engine; voice: Voice }, text: string): Promise<number> => {
        const begun = performance.now();
        let first = NaN;
        for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) {
          if (Number.isNaN(first) && chunk.samples.length > 0) first = performance.now() - begun;
        }
        return first;
      };
      for (const text of HEAD_SENTENCES) {
        await firstAudio(base, text);
        await firstAudio(whole, text);
        const cut: number[] = [];
        const kept: number[] = [];
        for (let i = 0; i < HEAD_REQUESTS; i++) {
          cut.push(await firstAudio(base, text));
          kept.push(await firstAudio(whole, text));
        }
        const head = splitHead(text, { betweenWords: false })?.head ?? '— (whole: no clause in its first words)';
        headRows.push([text, head, num(median(kept), 1), num(median(cut), 1), num(median(cut) / median(kept), 2)]);
      }
    }
  } finally {
    agent.destroy();
    await Promise.all(engines.map(async (engine) => (await whenIdle(engineBusy(engine)), await engine.stop())));
    if (server) {
      await whenIdle(serverBusy(server));
      lifetimePeak = (await server.stop()).peakRssMiB;
    }
    rmSync(work, { recursive: true, force: true });
  }

  const mark = (ok: boolean) => `**${ok ? 'MET' : 'MISSED'}**`;
  const threads = `${SERVED.workers} workers × ${SERVED.numThreads} thread`;
  const rssLine = `- Server peak RSS under load (${threads}, polled VmRSS over every served slice above): ${num(peakUnderLoad, 0)} MiB (target ≤ ${TARGET_RSS_MIB} MiB) — ${mark(peakUnderLoad <= TARGET_RSS_MIB)}; lifetime peak (VmHWM) ${num(lifetimePeak, 0)} MiB; ${num(idleRss, 0)} MiB idle after start, ${num(warmRss, 0)} MiB after the warm-up.`;
  const markdown = [
    ...(parts.has('bytes')
      ? [
        `### Neural serving: POST /tts/bytes (sherpa-onnx, vits-proxy-medium, ${threads}, concurrency ${connections}; ${servedRounds} slices of ${seconds} s per row, interleaved with the engine)`,
        '',
        markdownTable(
          SERVING_COLUMNS,
          servedRows,
        ),
        '',
        `- ${verdict(`served/raw at the native rate (raw pcm_s16le ${nativeRate} Hz)`, ratio, TARGET_RATIO)}`,
        `- Per CPU-second the native row is at ${num(cpuRatio, 2)} of the baseline.`,
        '- Ratio vs raw = median over slices of (served slice rate ÷ mean of the engine slices just before and after it). Both sides count only whole jobs finished inside the window.',
        '',
      ]
      : []),
    ...(parts.has('sse')
      ? [
        `### Neural serving: first audio of POST /tts/sse at concurrency 1 (“${TWO_SENTENCES}”, raw pcm_s16le ${nativeRate} Hz; ${servedRounds} slices of ${seconds} s, the engine and the server asked in turn)`,
        '',
        markdownTable(
          [
            'Path',
            'Requests',
            'First audio p50 ms',
            'First audio p99 ms',
            'p50 − engine p50, ms',
            'Served − engine request before it, ms (median of pairs; range of slice medians)',
            'Server CPU (cores)',
            'Server main thread (cores)',
            'Other load on machine (cores)',
            'Server peak RSS (MiB)',
          ],
          sseRows,
        ),
        '',
        `- POST /tts/sse: first audio ${num(sseDelta, 1)} ms after the engine's first chunk (its first sentence) at concurrency 1, the median over ${sseRows.length ? sseRows[0][1] : 0} pairs of an engine request and the served one right after it (target ≤ ${TARGET_OVERHEAD_MS} ms) — ${mark(sseDelta <= TARGET_OVERHEAD_MS)}`,
            rssLine,
        '- The child binds the shipped models to the neural engine as well, so it runs no eSpeak pool: its CPU and memory are the neural engine\'s and the gateway\'s.',
        '',
      ]
      : []),
    ...(parts.has('bytes') && !parts.has('sse') ? [rssLine, ''] : []),
    ...(parts.has('rtf')
      ? [
        `### Neural serving: real-time factor by workers × numThreads (in-process, concurrency = workers, “${RTF_TEXT}”; ${availableParallelism()} CPUs; ${gridRounds} slices of ${seconds} s per shape, 1 × 1 between every other slice)`,
        '',
        markdownTable(
          [
            'Workers',
            'numThreads',
            'Threads',
            'Jobs',
            'RTF per job p50',
            'RTF per job p99',
            'Audio s / wall s (median)',
            'vs 1 × 1 (median, range)',
            'First sentence p50 ms',
            'First sentence p99 ms',
            'CPU (cores)',
            'Other load on machine (cores)',
          ],
          gridRows,
        ),
        '',
        '- RTF per job = a job\'s wall time ÷ its audio seconds. Audio s / wall s = the sum over concurrent loops of (audio a loop finished ÷ the time to its last finished job), so a window does not cut a job\'s share off the rate.',
        '- First sentence = time from `synthesize()` to the first chunk, which the engine posts once the first sentence (or its head, `splitFirstSentence`) is made.',
        '',
      ]
      : []),
    ...(parts.has('head')
      ? [
        `### Neural serving: first audio with the first sentence's head cut off (in-process, ${threads}, concurrency 1, idle workers; ${HEAD_REQUESTS} requests per sentence and side, in turn)`,
        '',
        markdownTable(['Sentence', 'Head (idle workers: cut at clause punctuation only)', 'Whole, first audio p50 ms', 'Head, first audio p50 ms', 'Head ÷ whole'], headRows),
        '',
      ]
      : []),
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { markdown, ratio };
}

interface PairedSlice {
  /** First audio of each request, ms, in the order asked. */
  engine: number[];
  served: number[];
  /** served − engine, for each engine request and the served one right after it. */
  pairs: number[];
  failed: number;
  server: Usage;
  bench: Usage;
}

/** Milliseconds from the request to its first audio; the request is read to its end. */
async function firstAudio(client: StreamClient, text: string): Promise<number> {
  const started = performance.now();
  let first = NaN;
  await client(0, text, new AbortController().signal, (bytes) => {
    if (bytes > 0 && Number.isNaN(first)) first = performance.now() - started;
  });
  return first;
}

/**
 * One slice of the first-audio comparison: the engine and the server are asked in turn, one
 * request at a time, each read to its end, so both see the same moment's machine: the first
 * sentence takes 100–300 ms to make, and on a shared host that time drifts by tens of ms from one
 * second to the next, which slices of one side at a time would count as the server's.
 */
async function pairedSlice(engine: StreamClient, served: StreamClient, seconds: number, serverPid: number): Promise<PairedSlice> {
  const slice: Omit<PairedSlice, 'server' | 'bench'> = { engine: [], served: [], pairs: [], failed: 0 };
  const server = measureProcess(serverPid);
  const bench = measureProcess(process.pid);
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    try {
      const e = await firstAudio(engine, TWO_SENTENCES);
      const s = await firstAudio(served, TWO_SENTENCES);
      slice.engine.push(e);
      slice.served.push(s);
      slice.pairs.push(s - e);
    } catch (err) {
      if (++slice.failed === 1) note(`stream failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  slice.engine.sort((a, b) => a - b);
  slice.served.sort((a, b) => a - b);
  return { ...slice, server: server.stop(), bench: bench.stop() };
}

if (isMain(import.meta.url)) {
  const report = await runNeuralServing();
  if (report) console.log(report.markdown);
}
