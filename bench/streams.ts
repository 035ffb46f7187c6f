/**
 * @module bench/streams
 * Streams without underruns: how many voice-agent callers can a server keep
 * fed in real time? A stream is one WebSocket (`/tts/websocket`, each turn
 * one whole message, raw pcm_s16le at the engine's rate) or, with
 * `BENCH_STREAMS_TRANSPORT=sse`, `POST /tts/sse`. It asks for a turn (two to
 * four sentences; texts vary from turn to turn and stream to stream, and the
 * audio cache is off), plays it on its own clock (playback starts when the
 * turn's first chunk arrives; buffer = audio received − audio played) and,
 * once the turn has played out, asks for the next. An underrun is a chunk
 * arriving after its turn's buffer ran dry; the player then waits for it, so
 * its clock moves on by that lateness (one stall is one underrun, not every
 * chunk after it). First audio = request sent → first audio chunk, per turn.
 *
 * A trial runs N streams for `BENCH_STREAMS_SECONDS` (default 60); the
 * streams start spread over its first seconds, as callers arrive. It passes
 * with no underrun, no failed turn and p99 first audio ≤ 300 ms. The search
 * finds the largest N that passes: short screening trials
 * (`BENCH_STREAMS_SCREEN_SECONDS`, default 15) from 0.5 × the ideal, doubling
 * (or halving) to a bracket, then bisection to one stream; then full-length
 * trials from the screened answer, up or down one stream or by bisection,
 * at most `BENCH_STREAMS_MAX_FULL` (default 4) of them per engine.
 *
 * The ideal is the engine's raw audio seconds per wall second, in-process,
 * same workers, concurrency = workers, on the same turns, measured before and
 * after the search (their mean): the number of real-time streams a perfect
 * server could feed. Engines: eSpeak NG (the default pool, 2 workers), and the
 * neural stand-in (sherpa-onnx `vits-proxy-medium`, 2 workers × 1 thread, as
 * bench/neural-serving sets it up; skipped, saying why, without the model).
 * Run: `npm run build && node dist/bench/streams.js`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from '../src/engines/engine.js';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import type { Voice } from '../src/voices/voice.js';
import { startChild, type ChildServer } from './lib/child.js';
import { searchLargest, TurnClock, type SearchResult } from './lib/playback.js';
import { isMain, note, percentile } from './lib/load.js';
import { cores, measureProcess, otherLoad, waitForQuiet, type Usage } from './lib/proc.js';
import { markdownTable, num, type Cell } from './lib/table.js';
import { childOverrides, engineBusy, ENGINE_ID, MODEL_ID, neuralModelDir, prepareModel, SERVED, serverBusy, startEngine, whenIdle } from './neural-serving.js';
import { sseClient, WsStream, type StreamClient } from './streaming-latency.js';

/** Streams passing ÷ the ideal. */
export const TARGET_RATIO = 0.8;
/** p99 first audio of a passing trial. */
export const TARGET_FIRST_AUDIO_P99_MS = 300;
/** The streams' first turns start spread over this long (at most a quarter of the trial). */
const RAMP_SECONDS = 5;
/** Each ideal measurement (before and after the search). */
const IDEAL_SECONDS = 10;
/** The server's warm-up trial, at least. */
const WARMUP_SECONDS = 5;
/** The in-process engine's warm-up slices, and at most how many. */
const WARM_SLICE_SECONDS = 2;
const MIN_WARM_SLICES = 5;
const MAX_WARM_SLICES = 30;
/** Screening: bracketing steps, and trials in all. */
const MAX_BRACKET_STEPS = 8;
const MAX_SCREENS = 14;
/** After the window closes, a turn still waiting for its first audio is followed this long. */
const FOLLOW_MS = 15_000;
/** How often the server's pool is sampled (`/readyz`) during a trial. */
const SAMPLE_MS = 500;

function envNumber(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(given) && given > 0 ? given : fallback;
}

/** Sentences a voice agent says, short and long; turns are two to four of them. */
const SENTENCES = [
  'Sure, I can help with that.',
  'Let me pull up your account.',
  'Thanks for waiting.',
  'Your order shipped yesterday and should arrive by Thursday afternoon.',
  'I see two charges on your card from the third of this month.',
  'The first one is your monthly plan, and the second is the device installment.',
  'Would you like me to set up automatic payments so this does not happen again?',
  'Okay.',
  'I have moved your appointment to Friday at ten thirty in the morning.',
  'You will get a confirmation text in a few minutes.',
  'Is there anything else I can do for you today?',
  'Unfortunately that item is out of stock at the downtown store.',
  'The warehouse expects a new shipment within five to seven business days.',
  'I can reserve one for you, or send it straight to your home address.',
  'Got it.',
  'Your current balance is forty two dollars and eighteen cents, due on the twelfth.',
  'To reset your password, open the app, tap settings, then tap security.',
  'If the code does not arrive, check that your phone number ends in four seven one nine.',
  'I understand, and I am sorry for the trouble.',
  'I have added a credit of fifteen dollars to your next bill.',
  'The technician can come on Monday between eight and noon, or on Tuesday after two.',
  'Which of those works better for you?',
  'Perfect.',
  'The flight to Denver leaves at six fifteen from gate twenty two.',
  'Boarding starts thirty minutes before departure, so please be at the gate by five forty five.',
  'Your reservation for four people is confirmed for seven o clock tonight.',
  'We will hold the table for fifteen minutes.',
  'Let me transfer you to a specialist who can look into this further.',
  'One moment please.',
  'The refund was issued this morning and usually takes three to five days to show up.',
  'Your prescription is ready for pickup at the pharmacy on Main Street.',
  'They are open until nine tonight and from eight tomorrow morning.',
  'Can you confirm the last four digits of the card on file?',
  'Thank you, that matches what I have here.',
  'Your package was left at the front door at two fourteen this afternoon.',
  'I have sent the tracking link to your email address.',
];

/** `count` turns of two to four sentences, drawn with a fixed seed so every run speaks the same texts. */
export function makeTurns(count = 240, seed = 20261204): string[] {
  let state = seed >>> 0;
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const turns: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = 2 + Math.floor(random() * 3);
    const picked: string[] = [];
    while (picked.length < length) {
      const sentence = SENTENCES[Math.floor(random() * SENTENCES.length)];
      if (!picked.includes(sentence)) picked.push(sentence);
    }
    turns.push(picked.join(' '));
  }
  return turns;
}

/** Stream `stream`'s `k`-th turn: streams walk the list from different places, with different strides. */
function turnText(turns: string[], stream: number, k: number): string {
  return turns[(stream * 37 + k * (1 + (stream % 5))) % turns.length];
}

interface PoolSample {
  busy: number;
  queued: number;
  paused: number;
}

export interface Trial {
  streams: number;
  seconds: number;
  /** Turns that ended (done) inside the trial or were cut by its end. */
  turns: number;
  failed: number;
  /** Request → first audio chunk of every turn sent inside the window, ms, sorted. */
  firstAudio: number[];
  underruns: number;
  streamsWithUnderruns: number;
  /** How late each underrun's chunk arrived after the buffer ran dry, ms, sorted. */
  lateness: number[];
  /** Where in its turn each underrun fell: audio seconds the turn had delivered before it, sorted. */
  underrunAt: number[];
  /** Audio that arrived inside the window. */
  audioSeconds: number;
  server: Usage;
  clientCpuSeconds: number;
  pool: PoolSample[];
  /** Event-loop delay over the trial, ms: the server's (prom-client's monitor, from `/metrics`) and this process's. */
  loopDelay: { serverP99: number; serverMax: number; clientP99: number; clientMax: number };
  passed: boolean;
}

interface Target {
  label: string;
  workers: number;
  server: ChildServer;
  engineId: string;
  transport: 'ws' | 'sse';
  makeBody: (text: string, contextId?: string) => Record<string, unknown>;
  bytesPerSecond: number;
  turns: string[];
}

function passes(trial: Omit<Trial, 'passed'>): boolean {
  return trial.failed === 0 && trial.underruns === 0 && trial.firstAudio.length > 0 && percentile(trial.firstAudio, 99) <= TARGET_FIRST_AUDIO_P99_MS;
}

/** One trial: `n` streams for `seconds`, each playing its turns in real time. */
async function runTrial(target: Target, n: number, seconds: number): Promise<Trial> {
  const { server, transport, bytesPerSecond, turns } = target;
  const sockets: WsStream[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: n });
  let client: StreamClient;
  if (transport === 'ws') {
    for (let i = 0; i < n; i++) sockets.push(await WsStream.open(server.url, target.makeBody));
    client = (stream, text, signal, onAudio) => sockets[stream].speak(text, signal, onAudio);
  } else {
    client = sseClient(server.url, agent, (text) => target.makeBody(text));
  }
  const bytesPerMs = bytesPerSecond / 1000;
  const firstAudio: number[] = [];
  const lateness: number[] = [];
  const underrunAt: number[] = [];
  const hit = new Set<number>();
  let turnCount = 0;
  let failed = 0;
  let audioBytes = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const ramp = Math.min(RAMP_SECONDS, seconds / 4) * 1000;
  /** Turns past their first audio: cancelled when the window closes. */
  const playing = new Set<AbortController>();
  const all = new Set<AbortController>();
  const closing = setTimeout(() => {
    for (const controller of playing) controller.abort(new Error('window closed'));
  }, deadline - started);
  const hardStop = setTimeout(() => {
    for (const controller of all) controller.abort(new Error('no first audio'));
  }, deadline - started + FOLLOW_MS);

  const pool: PoolSample[] = [];
  let sampling = false;
  const sampler = setInterval(() => {
    if (sampling) return;
    sampling = true;
    fetch(`${server.url}/readyz`)
      .then((res) => res.json() as Promise<{ engines?: { id: string; busy?: number; queued?: number; paused?: number }[] }>)
      .then((ready) => {
        const engine = ready.engines?.find((e) => e.id === target.engineId);
        if (engine) pool.push({ busy: engine.busy ?? 0, queued: engine.queued ?? 0, paused: engine.paused ?? 0 });
      })
      .catch(() => {})
      .finally(() => (sampling = false));
  }, SAMPLE_MS);

  // Reading /metrics resets the server's event-loop delay histogram: the next read covers the trial.
  await loopDelayOf(server);
  const clientLoop = monitorEventLoopDelay({ resolution: 10 });
  clientLoop.enable();
  const watch = measureProcess(server.pid);
  const cpuBefore = process.cpuUsage();
  const stream = async (i: number) => {
    await sleep((ramp * i) / n);
    for (let k = 0; performance.now() < deadline; k++) {
      const controller = new AbortController();
      all.add(controller);
      const clock = new TurnClock(performance.now());
      const onAudio = (bytes: number) => {
        if (bytes === 0) return;
        const now = performance.now();
        const first = !clock.started;
        const received = clock.receivedSeconds;
        const late = clock.chunk(now, bytes / bytesPerMs);
        if (first) {
          firstAudio.push(clock.firstAudioMs);
          if (now > deadline) controller.abort(new Error('window closed'));
          else playing.add(controller);
        } else if (late > 0 && now <= deadline) {
          lateness.push(late);
          underrunAt.push(received);
          hit.add(i);
        }
        if (now <= deadline) audioBytes += bytes;
      };
      try {
        await client(i, turnText(turns, i, k), controller.signal, onAudio);
        turnCount++;
      } catch (err) {
        if (!controller.signal.aborted || !clock.started) {
          failed++;
          if (failed === 1) note(`  a turn failed: ${err instanceof Error ? err.message : String(err)}`);
          await sleep(250);
        } else turnCount++;
      } finally {
        playing.delete(controller);
        all.delete(controller);
      }
      if (controller.signal.aborted) break;
      // The next turn is asked for once this one has played out.
      const playedOut = clock.playedOutAt;
      if (playedOut >= deadline) break;
      const wait = playedOut - performance.now();
      if (wait > 0) await sleep(wait);
    }
  };
  await Promise.all(Array.from({ length: n }, (_, i) => stream(i)));
  clearTimeout(closing);
  clearTimeout(hardStop);
  clearInterval(sampler);
  const usage = watch.stop();
  const cpu = process.cpuUsage(cpuBefore);
  clientLoop.disable();
  const serverLoop = await loopDelayOf(server);
  for (const socket of sockets) socket.close();
  agent.destroy();
  // Cancelled turns finish the sentence they are on (sherpa-onnx cannot be interrupted).
  await whenIdle(serverBusy(server));
  const trial = {
    streams: n,
    seconds,
    turns: turnCount,
    failed,
    firstAudio: firstAudio.sort((a, b) => a - b),
    underruns: lateness.length,
    streamsWithUnderruns: hit.size,
    lateness: lateness.sort((a, b) => a - b),
    underrunAt: underrunAt.sort((a, b) => a - b),
    audioSeconds: audioBytes / bytesPerSecond,
    server: usage,
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    pool,
    loopDelay: { serverP99: serverLoop.p99, serverMax: serverLoop.max, clientP99: clientLoop.percentile(99) / 1e6, clientMax: clientLoop.max / 1e6 },
  };
  return { ...trial, passed: passes(trial) };
}

/** The server's event-loop delay p99 and max (ms) since the last read of `/metrics` (prom-client resets it on each read). */
async function loopDelayOf(server: ChildServer): Promise<{ p99: number; max: number }> {
  try {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const read = (name: string) => Number(new RegExp(`^${name} ([0-9.eE+-]+)`, 'm').exec(text)?.[1] ?? NaN) * 1000;
    return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
  } catch {
    return { p99: NaN, max: NaN };
  }
}

function trialLine(t: Trial): string {
  return `${t.streams} streams, ${t.seconds} s: ${t.passed ? 'pass' : 'FAIL'} (underruns ${t.underruns}, first audio p99 ${num(percentile(t.firstAudio, 99), 0)} ms, failed ${t.failed})`;
}

/** An engine driven in the benchmark's own process: `speak` counts the samples it makes. */
interface InProcessEngine {
  sampleRate: number;
  speak: (text: string, signal: AbortSignal, onSamples: (samples: number) => void) => Promise<void>;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** The engine's raw rate: `workers` loops of whole turns, in-process; audio counted as it is made inside the window. */
async function idealSlice(speak: InProcessEngine['speak'], sampleRate: number, turns: string[], workers: number, seconds: number): Promise<{ rate: number; usage: Usage }> {
  const watch = measureProcess(process.pid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  let samples = 0;
  const loop = async (w: number) => {
    for (let k = 0; performance.now() < deadline; k++) {
      try {
        await speak(turnText(turns, w, k), controller.signal, (made) => {
          if (performance.now() <= deadline) samples += made;
        });
      } catch (err) {
        if (controller.signal.aborted) return;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
  clearTimeout(timer);
  const usage = watch.stop();
  return { rate: samples / sampleRate / seconds, usage };
}

/** Turns asked one at a time for the first-audio floor. */
const FLOOR_TURNS = 60;

/**
 * The first audio the engine itself gives, in-process, one turn at a time on idle workers: no N of
 * streams can be served faster, so a p99 here above the bound means no N passes. Each turn is
 * cancelled at its first chunk; the next waits for the workers to be idle again.
 */
async function firstAudioFloor(engine: InProcessEngine, turns: string[]): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < Math.min(FLOOR_TURNS, turns.length); k++) {
    const controller = new AbortController();
    const begun = performance.now();
    let first = NaN;
    try {
      await engine.speak(turns[k], controller.signal, (made) => {
        if (made > 0 && Number.isNaN(first)) {
          first = performance.now() - begun;
          controller.abort();
        }
      });
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    times.push(first);
    await engine.idle();
  }
  return times.sort((a, b) => a - b);
}

interface EngineSection {
  label: string;
  markdown: string;
  ratio: number;
}

interface Subject {
  label: string;
  workers: number;
  overrides: Record<string, unknown>;
  engineId: string;
  makeBody: (sampleRate: number) => (text: string, contextId?: string) => Record<string, unknown>;
  /** Starts the in-process engine; `speak` counts samples. */
  inProcess(): Promise<InProcessEngine>;
  startTimeoutMs: number;
}

async function measureSubject(subject: Subject, transport: 'ws' | 'sse', turns: string[]): Promise<EngineSection> {
  const fullSeconds = envNumber('BENCH_STREAMS_SECONDS', 60);
  const screenSeconds = Math.min(fullSeconds, envNumber('BENCH_STREAMS_SCREEN_SECONDS', 15));
  const maxFull = Math.round(envNumber('BENCH_STREAMS_MAX_FULL', 4));
  const notes: string[] = [];
  const waited = await waitForQuiet();
  if (waited === null) notes.push('The machine never went quiet for a second within 8 s before this section started: other load was running.');
  const load = loadavg()[0];
  note(`streams (${subject.label}): starting the Voicegate child`);
  const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(subject.overrides)], subject.startTimeoutMs);
  let engine: InProcessEngine | null = null;
  const ideals: { rate: number; usage: Usage }[] = [];
  /** Each full-length trial and the ideal slice just before it (the next one follows it). */
  const fullTrials: { trial: Trial; before: number }[] = [];
  let result!: SearchResult<Trial>;
  let lifetimePeak = NaN;
  let warm!: Trial;
  const warmSlices: number[] = [];
  let floor: number[] = [];
  try {
    const served = (server.ready.engines as { id: string; ready?: boolean; workers?: number; sampleRate?: number }[]).find((e) => e.id === subject.engineId);
    if (!served?.ready) throw new Error(`the server child's ${subject.engineId} engine is not ready`);
    if (served.workers !== subject.workers) throw new Error(`the server child reports ${served.workers} ${subject.engineId} workers, not ${subject.workers}`);
    engine = await subject.inProcess();
    const sampleRate = engine.sampleRate;
    const target: Target = {
      label: subject.label,
      workers: subject.workers,
      server,
      engineId: subject.engineId,
      transport,
      makeBody: subject.makeBody(sampleRate),
      bytesPerSecond: 2 * sampleRate,
      turns,
    };
    const inProcess = engine;
    const ideal = async () => {
      const slice = await idealSlice(inProcess.speak, sampleRate, turns, subject.workers, IDEAL_SECONDS);
      await inProcess.idle();
      note(`  ideal: ${num(slice.rate, 1)} audio s / s (in-process, ${subject.workers} workers)`);
      return slice;
    };
    // The engine warms (at least MIN_WARM_SLICES slices) until two slices in a row agree and the last
    // is no longer above the best before it: V8 tiers eSpeak's wasm up in the background,
    // which takes far longer than its usual 3–4 s on a busy machine (minutes at a load average of 15).
    // The server's workers tier up alike: they then warm as long, on as many streams as half the
    // engine's rate, whose first turns are made as fast as its workers can.
    note(`warm-up: in-process engine (${WARM_SLICE_SECONDS} s slices until two agree within 10 % and the rate stops rising), then the server as long (at least ${WARMUP_SECONDS} s)`);
    const warmStarted = performance.now();
    for (let i = 0; i < MAX_WARM_SLICES; i++) {
      const rate = (await idealSlice(inProcess.speak, sampleRate, turns, subject.workers, WARM_SLICE_SECONDS)).rate;
      await inProcess.idle();
      const before = [...warmSlices];
      warmSlices.push(rate);
      if (warmSlices.length >= MIN_WARM_SLICES && Math.abs(rate - before.at(-1)!) <= 0.1 * Math.max(rate, before.at(-1)!) && rate <= 1.1 * Math.max(...before)) break;
    }
    const serverWarmSeconds = Math.max(WARMUP_SECONDS, Math.round((performance.now() - warmStarted) / 1000));
    warm = await runTrial(target, Math.max(2 * subject.workers, Math.round(warmSlices.at(-1)! / 2)), serverWarmSeconds);
    floor = await firstAudioFloor(inProcess, turns);
    note(`  first-audio floor: p50 ${num(percentile(floor, 50), 1)} / p99 ${num(percentile(floor, 99), 1)} ms (in-process, one turn at a time)`);
    ideals.push(await ideal());
    const start = Math.max(1, Math.round(ideals[0].rate / 2));
    note(`search: from ${start} streams, screening trials of ${screenSeconds} s, then at most ${maxFull} of ${fullSeconds} s`);
    // Every full-length trial sits between two ideal slices and is compared with the engine's rate around it.
    const screen = async (n: number) => {
      const trial = await runTrial(target, n, screenSeconds);
      note(`  screen ${trialLine(trial)}`);
      return trial;
    };
    const full = async (n: number) => {
      ideals.push(await ideal());
      const trial = await runTrial(target, n, fullSeconds);
      note(`  full ${trialLine(trial)}`);
      fullTrials.push({ trial, before: ideals.length - 1 });
      return trial;
    };
    // BENCH_STREAMS_N: no search, full-length trials at N and N + 1 only (to compare builds or settings at one load).
    const fixed = Math.round(envNumber('BENCH_STREAMS_N', 0));
    result = fixed
      ? await searchLargest(screen, full, fixed, { bracketSteps: 0, screens: 0, full: 2, skipScreening: true })
      : await searchLargest(screen, full, start, { bracketSteps: MAX_BRACKET_STEPS, screens: MAX_SCREENS, full: maxFull });
    ideals.push(await ideal());
  } finally {
    await engine?.stop();
    await whenIdle(serverBusy(server));
    lifetimePeak = (await server.stop()).peakRssMiB;
  }

  const idealRate = ideals.reduce((n, s) => n + s.rate, 0) / ideals.length;
  /** The engine's rate around a full-length trial: the mean of the ideal slices just before and after it. */
  const around = (t: Trial): number => {
    const at = fullTrials.find((f) => f.trial === t);
    return at ? (ideals[at.before].rate + ideals[Math.min(ideals.length - 1, at.before + 1)].rate) / 2 : idealRate;
  };
  const best = result.best;
  const bestIdeal = best ? around(best) : idealRate;
  const ratio = (best?.streams ?? 0) / bestIdeal;
  const row = (t: Trial): Cell[] => {
    const used = cores(t.server);
    const client = t.clientCpuSeconds / t.server.wallSeconds;
    const busy = t.pool.length ? t.pool.reduce((n, s) => n + s.busy, 0) / t.pool.length : NaN;
    const queued = t.pool.length ? t.pool.reduce((n, s) => n + s.queued, 0) / t.pool.length : NaN;
    const maxQueued = t.pool.length ? Math.max(...t.pool.map((s) => s.queued)) : NaN;
    return [
      t.streams,
      num(around(t), 1),
      num(t.streams / around(t), 2),
      t.seconds,
      t.turns,
      t.failed,
      `${t.underruns} (${t.streamsWithUnderruns})`,
      num(t.lateness.at(-1) ?? NaN, 0),
      num(percentile(t.firstAudio, 50), 1),
      num(percentile(t.firstAudio, 99), 1),
      num(t.audioSeconds / t.seconds, 1),
      num(used.all, 2),
      num(used.main, 2),
      num(t.server.peakRssMiB, 0),
      num(client, 2),
      num(otherLoad(t.server, t.clientCpuSeconds), 2),
      `${num(busy, 2)} / ${num(queued, 1)} / ${num(maxQueued, 0)}`,
      `${num(t.loopDelay.serverP99, 0)} / ${num(t.loopDelay.serverMax, 0)}`,
      `${num(t.loopDelay.clientP99, 0)} / ${num(t.loopDelay.clientMax, 0)}`,
      t.passed ? 'pass' : 'fail',
    ];
  };
  const trials = [...result.full].sort((a, b) => a.streams - b.streams);
  const table = markdownTable(
    [
      'Streams (N)',
      'Ideal around it',
      'N ÷ ideal',
      'Trial s',
      'Turns',
      'Failed',
      'Underruns (streams)',
      'Worst lateness ms',
      'First audio p50 ms',
      'First audio p99 ms',
      'Audio received s / wall s',
      'Server CPU',
      'Main thread',
      'Server peak RSS MiB',
      'Client CPU',
      'Other load',
      'Pool busy / queued mean / max',
      'Server loop delay p99 / max ms',
      'Client loop delay p99 / max ms',
      'Result',
    ],
    trials.map(row),
  );
  const screens = result.screens.map((t) => `${t.streams} ${t.passed ? 'pass' : 'fail'} (${t.underruns} underruns, p99 ${num(percentile(t.firstAudio, 99), 0)} ms${t.failed ? `, ${t.failed} failed` : ''})`);
  const idealUsage = ideals.map((s) => num(cores(s.usage).all, 2));
  const markdown = [
    `#### ${subject.label}: ${best ? best.streams : 0} streams for ${fullSeconds} s without underruns = ${num(ratio, 2)} of the ideal ${num(bestIdeal, 1)} (target ≥ ${num(TARGET_RATIO, 2)}) — **${ratio >= TARGET_RATIO ? 'MET' : 'MISSED'}**`,
    '',
    table,
    '',
    `- Ideal (audio s / s, in-process, ${subject.workers} workers, concurrency ${subject.workers}, the same turns, ${IDEAL_SECONDS} s slices before the search, then before every full-length trial and after the last): ${ideals.map((s) => num(s.rate, 1)).join(', ')} (mean ${num(idealRate, 1)}; ${idealUsage.join(', ')} cores). It is the number of real-time streams a perfect server could feed; each full-length trial is compared with the mean of the slices just before and after it.`,
    `- First-audio floor: the in-process engine asked the first ${floor.length} turns one at a time on idle workers gave first audio at p50 ${num(percentile(floor, 50), 1)} / p99 ${num(percentile(floor, 99), 1)} ms (max ${num(floor.at(-1) ?? NaN, 1)}). No N of streams is served faster${percentile(floor, 99) > TARGET_FIRST_AUDIO_P99_MS ? `: above the ${TARGET_FIRST_AUDIO_P99_MS} ms bound, no N passes` : ''}.`,
    `- Largest N passing a ${fullSeconds} s trial: ${best ? best.streams : 'none'}${result.above ? `; ${result.above.streams} failed` : ''}${best && result.above && result.above.streams - best.streams > 1 ? ' (the full-length trials ran out before the bracket closed)' : ''}.`,
    `- Screening (${result.screens.length} trials of ${result.screens[0]?.seconds ?? '—'} s, from 0.5 × the ideal): ${screens.join(', ')}.`,
    ...underrunLines(trials),
    `- Warm-up: the in-process engine made ${warmSlices.map((r) => num(r, 1)).join(', ')} audio s / s in ${WARM_SLICE_SECONDS} s slices; then the server ${warm.streams} streams for ${warm.seconds} s (first audio p99 ${num(percentile(warm.firstAudio, 99), 1)} ms).`,
    `- Server lifetime peak RSS (VmHWM) ${num(lifetimePeak, 0)} MiB; load average (1 min) at the section's start ${num(load, 2)}.`,
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { label: subject.label, markdown, ratio };
}

/** Where the underruns of each failed full-length trial fell in their turns. */
function underrunLines(trials: Trial[]): string[] {
  return trials
    .filter((t) => t.underruns > 0)
    .map((t) => {
      const early = t.underrunAt.filter((at) => at <= 2).length;
      return `- ${t.streams} streams: underruns after p50 ${num(percentile(t.underrunAt, 50), 2)} s of their turn's audio (min ${num(t.underrunAt[0], 2)}, max ${num(t.underrunAt.at(-1)!, 2)}); ${early} of ${t.underruns} within its first 2 s; lateness p50 ${num(percentile(t.lateness, 50), 0)} ms.`;
    });
}

function espeakSubject(): Subject {
  const voice = NAMED_VOICES.find((v) => v.id === 'sarah')!;
  const workers = 2;
  return {
    label: 'eSpeak NG (2 workers)',
    workers,
    engineId: 'espeak',
    startTimeoutMs: 30_000,
    overrides: { accounts: { enabled: false }, cache: { enabled: false }, metrics: { public: true } },
    makeBody: (sampleRate) => (text, contextId) => ({
      model_id: 'gepard-1.0',
      transcript: text,
      voice: { mode: 'id', id: 'sarah' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: sampleRate },
      ...(contextId ? { context_id: contextId } : {}),
    }),
    async inProcess() {
      const pool = new EspeakPool({ id: 'espeak', workers, queueLimit: 256, highWater: 32, logger: createLogger('silent') });
      await pool.start();
      return {
        sampleRate: pool.sampleRate,
        speak: async (text, signal, onSamples) => {
          for await (const chunk of pool.synthesizeInt16({ text, voice, speed: 1, wordTimings: false }, signal)) onSamples(chunk.samples.length);
        },
        idle: () => whenIdle(engineBusy(pool)),
        stop: () => pool.stop(),
      };
    },
  };
}

function neuralSubject(model: string, work: string): Subject {
  return {
    label: `neural stand-in vits-proxy-medium (${SERVED.workers} workers × ${SERVED.numThreads} thread)`,
    workers: SERVED.workers,
    engineId: ENGINE_ID,
    startTimeoutMs: 120_000,
    overrides: { ...childOverrides(model), cache: { enabled: false }, metrics: { public: true } },
    makeBody: (sampleRate) => (text, contextId) => ({
      model_id: MODEL_ID,
      transcript: text,
      voice: { mode: 'id', id: ENGINE_ID },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: sampleRate },
      ...(contextId ? { context_id: contextId } : {}),
    }),
    async inProcess() {
      const { engine, voice }: { engine: Engine; voice: Voice } = await startEngine(model, work, SERVED);
      const idle = () => whenIdle(engineBusy(engine));
      return {
        sampleRate: engine.sampleRate,
        speak: async (text, signal, onSamples) => {
          for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, signal)) onSamples(chunk.samples.length);
        },
        idle,
        stop: async () => (await idle(), await engine.stop()),
      };
    },
  };
}

export interface StreamsReport {
  markdown: string;
}

export async function runStreamsBench(): Promise<StreamsReport> {
  const transport = process.env.BENCH_STREAMS_TRANSPORT === 'sse' ? 'sse' : 'ws';
  const turns = makeTurns();
  const sections: string[] = [];
  const started = new Date().toISOString();
  // BENCH_STREAMS_ENGINES: `espeak`, `neural` or both (the default).
  const only = process.env.BENCH_STREAMS_ENGINES;
  if (only !== 'neural') sections.push((await measureSubject(espeakSubject(), transport, turns)).markdown);
  if (only === 'espeak') return { markdown: sections.join('\n') };

  const source = neuralModelDir();
  if (!existsSync(join(source, 'model.onnx')) || !existsSync(join(source, 'tokens.txt'))) {
    note(`streams: neural row skipped, no stand-in model (model.onnx, tokens.txt) in ${source}`);
    sections.push(`#### Neural stand-in: skipped (no stand-in model in ${source}; BENCH_NEURAL_MODEL sets its folder)`);
  } else {
    const work = mkdtempSync(join(tmpdir(), 'voicegate-streams-bench-'));
    try {
      const model = prepareModel(source, work);
      sections.push((await measureSubject(neuralSubject(model, work), transport, turns)).markdown);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  const path = transport === 'ws' ? 'WebSocket /tts/websocket (Cartesia dialect, one context per turn, the turn whole in one message)' : 'POST /tts/sse';
  const markdown = [
    `### Streams without underruns (${path}, raw pcm_s16le at the engine's rate, accounts and the audio cache off; started ${started})`,
    '',
    ...sections.flatMap((s) => [s, '']),
    `- A stream asks for a turn (2–4 sentences, ${turns.length} turns drawn from ${SENTENCES.length} sentences), plays it in real time from its first chunk, and asks for the next once it has played out. Underrun: a chunk arriving after the turn's buffer ran dry (the player then waits, so one stall counts once); worst lateness is by how much. Pass: no underrun, no failed turn, p99 first audio ≤ ${TARGET_FIRST_AUDIO_P99_MS} ms (request sent → first chunk, every turn sent in the window). Streams start spread over the first ${RAMP_SECONDS} s (a quarter of a screening trial at most); every turn counts from the start.`,
    '- Server CPU, main thread and peak RSS: the server child over the trial, in cores and MiB. Client CPU: this process (the streams and the pool sampler; the in-process engine is idle then), on the same cores. Other load: the machine\'s busy CPU minus both. Pool: the served engine\'s busy workers, queued jobs (mean, max), sampled from `/readyz` every 500 ms. Loop delay: event-loop delay over the trial, the server\'s from its `/metrics` (prom-client), this process\'s from `monitorEventLoopDelay`.',
  ].join('\n');
  return { markdown };
}

if (isMain(import.meta.url)) {
  const report = await runStreamsBench();
  console.log(report.markdown);
}
