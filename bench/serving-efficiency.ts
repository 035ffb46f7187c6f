/**
 * @module bench/serving-efficiency
 * Serving efficiency: audio seconds served per wall second by POST /tts/bytes
 * at saturation (model gepard-1.0 on the embedded eSpeak NG pool, server in a
 * child process), against the engine's own rate on the same cores: an
 * `EspeakPool` with the same worker count driven in-process at the same
 * concurrency. Slices of the two alternate (see lib/interleave) and both
 * count only work completed inside equal windows.
 * Run: `npm run build && node dist/bench/serving-efficiency.js`.
 */
import { createMp3Stream } from '../src/audio/mp3.js';
import { createResampler } from '../src/audio/resampler.js';
import { parseWav } from '../src/audio/wav.js';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { startChild, type ChildServer } from './lib/child.js';
import { baselineRow, SERVING_COLUMNS, servedRow, type BaselineSlice } from './lib/serving-rows.js';
import { interleave, type Slice } from './lib/interleave.js';
import { runLeanLoad } from './lib/lean-load.js';
import { isMain, loadSlice, note, rounds, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { measureProcess, waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict, type Cell } from './lib/table.js';

export const TARGET = 0.9;

/** One-to-two-sentence English prompts, rotated across requests. */
export const TEXTS = [
  'Thanks for calling. Your order has shipped and should arrive on Thursday.',
  'The quick brown fox jumps over the lazy dog while the farmer watches from the porch.',
  'Please hold for a moment while I transfer you to the next available agent.',
  "Good morning! Today's forecast calls for light rain in the afternoon, clearing by evening.",
  'Your appointment is confirmed for three thirty. Reply yes to keep it, or no to cancel.',
];

const VOICE_ID = 'sarah';
const NATIVE_RATE = 22050;
/** Warm-up before measuring: V8 keeps tiering eSpeak's wasm up for the first seconds of load. */
const WARMUP_SECONDS = 4;

interface Format {
  id: string;
  output_format: Record<string, unknown> & { container: 'raw' | 'wav' | 'mp3'; sample_rate: number };
  /** Bytes per sample of a PCM encoding; undefined for MP3, whose seconds per byte preflight measures. */
  bytesPerSample?: number;
  /** The row the target applies to: the engine's native rate, no resampling. */
  primary: boolean;
}

const FORMATS: Format[] = [
  { id: `raw pcm_s16le ${NATIVE_RATE} Hz (native)`, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: NATIVE_RATE }, bytesPerSample: 2, primary: true },
  { id: 'raw pcm_mulaw 8000 Hz', output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }, bytesPerSample: 1, primary: false },
  { id: 'raw pcm_alaw 8000 Hz', output_format: { container: 'raw', encoding: 'pcm_alaw', sample_rate: 8000 }, bytesPerSample: 1, primary: false },
  { id: 'wav pcm_s16le 44100 Hz', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 44100 }, bytesPerSample: 2, primary: false },
];

/** MP3 is compared with its own baseline: the same pool plus resampling and LAME in this process. */
const MP3: Format = { id: 'mp3 44100 Hz 128 kbps', output_format: { container: 'mp3', bit_rate: 128000, sample_rate: 44100 }, primary: false };

/** What the in-process baseline does with each chunk besides synthesising it. */
type Post = () => Promise<{ chunk(samples: Float32Array): void; end(): void }>;

/** Engine + the pipeline's resampler + LAME, in this process: what an MP3 answer costs without serving it. */
const mp3Post: Post = async () => {
  const resampler = await createResampler(NATIVE_RATE, 44100);
  const mp3 = await createMp3Stream(44100, 128000);
  return {
    chunk: (samples) => void mp3.encode(resampler.process(samples)),
    end: () => {
      mp3.encode(resampler.flush());
      mp3.flush();
      resampler.destroy();
    },
  };
};

function body(text: string, format: Format): Record<string, unknown> {
  // Both models run on the same eSpeak pool; only omnivoice's profile allows MP3.
  return { model_id: format.output_format.container === 'mp3' ? 'omnivoice' : 'gepard-1.0', transcript: text, voice: { mode: 'id', id: VOICE_ID }, output_format: format.output_format };
}

/**
 * One baseline slice: `concurrency` loops, each walking the texts from the start, synthesizing on the
 * pool. Counts jobs finished within `seconds`; jobs still running then are cancelled, as the load generator
 * drops requests in flight when its window closes.
 */
async function rawSlice(pool: EspeakPool, concurrency: number, seconds: number, post?: Post): Promise<BaselineSlice> {
  const voice = NAMED_VOICES.find((v) => v.id === VOICE_ID)!;
  const latencies: number[] = [];
  let samples = 0;
  let jobs = 0;
  const controller = new AbortController();
  const watch = measureProcess(process.pid);
  const deadline = performance.now() + seconds * 1000;
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  const loop = async () => {
    for (let i = 0; performance.now() < deadline; i++) {
      const index = i % TEXTS.length;
      const started = performance.now();
      let made = 0;
      try {
        const after = await post?.();
        for await (const chunk of pool.synthesize({ text: TEXTS[index], voice, speed: 1, wordTimings: false }, controller.signal)) {
          made += chunk.samples.length;
          after?.chunk(chunk.samples);
        }
        after?.end();
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
  return { jobs, audioSeconds: samples / pool.sampleRate, seconds, latencies: latencies.sort((a, b) => a - b), usage: watch.stop() };
}

/**
 * Each text's length from the engine alone, one request at a time, as the preflight fetches them.
 * Under load the pool speaks a first sentence as a head and a rest when no worker is free, and
 * the extra pause between them makes that text ~0.2 s longer, so lengths from a loaded slice are
 * not what one request at a time gets.
 */
async function engineLengths(pool: EspeakPool): Promise<number[]> {
  const voice = NAMED_VOICES.find((v) => v.id === VOICE_ID)!;
  const lengths: number[] = [];
  for (const text of TEXTS) {
    let made = 0;
    for await (const chunk of pool.synthesizeInt16({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) made += chunk.samples.length;
    lengths.push(made / pool.sampleRate);
  }
  return lengths;
}

/** Fetches every text once in `format`: checks the answers against the engine and learns the header size. */
async function preflight(server: ChildServer, format: Format, expected: number[]): Promise<{ headerBytes: number; secondsPerByte: number; mismatches: string[] }> {
  let headerBytes = 0;
  let bytesTotal = 0;
  const mismatches: string[] = [];
  for (const [i, text] of TEXTS.entries()) {
    const res = await fetch(`${server.url}/tts/bytes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(text, format)) });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`preflight ${format.id}: HTTP ${res.status} ${bytes.toString('utf8').slice(0, 200)}`);
    if (format.output_format.container === 'wav') {
      const wav = parseWav(bytes);
      if (wav.data.byteOffset - bytes.byteOffset + wav.data.length !== bytes.length) throw new Error('preflight: the WAV data chunk is not last');
      headerBytes = bytes.length - wav.data.length;
    }
    bytesTotal += bytes.length;
    if (format.bytesPerSample === undefined) continue; // MP3: its length is checked by the MP3 tests, not here
    const seconds = (bytes.length - headerBytes) / format.bytesPerSample / format.output_format.sample_rate;
    // eSpeak's output length for a text wobbles by a few ms from run to run; more than 1% means different audio.
    if (!(Math.abs(seconds - expected[i]) <= 0.01 * expected[i])) {
      mismatches.push(`"${text.slice(0, 24)}…": served ${num(seconds, 3)} s, engine ${num(expected[i], 3)} s`);
    }
  }
  const secondsPerByte =
    format.bytesPerSample === undefined ? expected.reduce((n, v) => n + v, 0) / bytesTotal : 1 / format.bytesPerSample / format.output_format.sample_rate;
  return { headerBytes, secondsPerByte, mismatches };
}

export interface ServingReport {
  markdown: string;
  /** served/raw for the native-rate row (median over slices). */
  ratio: number;
  /** served/baseline per format id (median over slices). */
  ratios: Map<string, number>;
}

export async function runServingEfficiency(): Promise<ServingReport> {
  const seconds = sliceSeconds();
  const roundCount = rounds(3);
  const notes: string[] = [];
  const waited = await waitForQuiet();
  if (waited === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  note('serving efficiency: starting the Voicegate child');
  // Accounts off: this measures synthesis serving, not key checks and billing (the gateway benchmark covers those).
  const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify({ accounts: { enabled: false } })]);
  let pool: EspeakPool | null = null;
  let lifetimePeak = NaN;
  const rows: Cell[][] = [];
  let ratio = NaN;
  let cpuRatio = NaN;
  let connections = 0;
  /** Median served/baseline ratio per format. */
  const ratios_ = new Map<string, number>();
  try {
    const espeak = (server.ready.engines as { id: string; workers?: number }[]).find((e) => e.id === 'espeak');
    const workers = espeak?.workers ?? 0;
    if (!workers) throw new Error('the server child reports no espeak workers');
    connections = 2 * workers;

    pool = new EspeakPool({ id: 'espeak', workers, queueLimit: 256, highWater: 32, logger: createLogger('silent') });
    await pool.start();
    const basePool = pool;
    note(`warm-up: in-process pool and server (${WARMUP_SECONDS} s each), ${workers} workers, concurrency ${connections}`);
    await rawSlice(basePool, connections, WARMUP_SECONDS);
    const lengths = await engineLengths(basePool);
    const perByte = new Map<string, { headerBytes: number; secondsPerByte: number }>();
    const options = new Map<string, LoadOptions>();
    for (const format of [...FORMATS, MP3]) {
      const check = await preflight(server, format, lengths);
      if (check.mismatches.length) notes.push(`Audio length check failed for ${format.id}: ${check.mismatches.join('; ')}`);
      perByte.set(format.id, check);
      const load: LoadOptions = { url: server.url, path: '/tts/bytes', bodies: TEXTS.map((t) => body(t, format)), connections, seconds };
      options.set(format.id, load);
      await runLeanLoad({ ...load, seconds: format.primary ? WARMUP_SECONDS : 1 });
    }

    const audioSeconds = (format: Format, load: { bodyBytes: number; ok: number }) => {
      const { headerBytes, secondsPerByte } = perByte.get(format.id)!;
      return (load.bodyBytes - load.ok * headerBytes) * secondsPerByte;
    };
    const served = (format: Format) => ({
      id: format.id,
      run: async (): Promise<Slice<LoadSlice>> => {
        const slice = await loadSlice(server.pid, options.get(format.id)!, runLeanLoad);
        return { rate: audioSeconds(format, slice.load) / slice.load.seconds, data: slice };
      },
    });

    /** One interleaved comparison: its baseline row, then a row per served format. */
    const compare = async (label: string, output: string, formats: Format[], post?: Post) => {
      note(`measuring ${label}: ${roundCount} rounds of ${seconds} s slices, baseline between every served slice`);
      const result = await interleave<BaselineSlice, LoadSlice>(
        async () => {
          const slice = await rawSlice(basePool, connections, seconds, post);
          return { rate: slice.audioSeconds / slice.seconds, data: slice };
        },
        formats.map(served),
        roundCount,
      );
      const baseline = baselineRow(label, output, result.reference.map((s) => s.data), result.reference.map((s) => s.rate));
      rows.push(baseline.row);
      for (const format of formats) {
        const { slices, ratios } = result.candidates.get(format.id)!;
        const served = servedRow(format.id, slices, ratios, baseline.perCpu, (load) => audioSeconds(format, load));
        if (format.primary) {
          ratio = served.ratio;
          cpuRatio = served.cpuRatio;
        }
        ratios_.set(format.id, served.ratio);
        if (served.load.failed) notes.push(`${format.id}: ${served.load.failed} failed requests (non-2xx, errors or timeouts).`);
        rows.push(served.row);
      }
    };
    await compare('EspeakPool in-process (baseline)', `native ${NATIVE_RATE} Hz`, FORMATS);
    await compare('EspeakPool + resampler + LAME in-process (MP3 baseline)', MP3.id, [MP3], mp3Post);
  } finally {
    await pool?.stop();
    lifetimePeak = (await server.stop()).peakRssMiB;
  }

  const table = markdownTable(
    SERVING_COLUMNS,
    rows,
  );
  const markdown = [
    `### Serving efficiency (concurrency ${connections}; ${roundCount} slices of ${seconds} s per row, interleaved with the baseline)`,
    '',
    table,
    '',
    ...[...FORMATS, MP3].map((f) => `- ${verdict(`served/${f === MP3 ? 'MP3 baseline' : 'raw'} for ${f.id}`, ratios_.get(f.id) ?? NaN, TARGET)}`),
    `- Per CPU-second (audio made per CPU-second of the serving process, load generator excluded) the native row is at ${num(cpuRatio, 2)} of the baseline.`,
    '- Ratio vs raw = median over slices of (served slice rate ÷ mean of the baseline slices just before and after it).',
    '- Other load on machine = busy CPU from /proc/stat minus the server and the benchmark process: anything above ~0.1 means the figures were taken on a shared, busy machine.',
    `- Server lifetime peak RSS (VmHWM): ${num(lifetimePeak, 0)} MiB. On the baseline row, CPU is the benchmark process itself (pool workers + its main thread).`,
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { markdown, ratio, ratios: ratios_ };
}

if (isMain(import.meta.url)) {
  const report = await runServingEfficiency();
  console.log(report.markdown);
}
