/**
 * @module bench/mixed-latency
 * Scheduling under a mixed load: first audio of short agent turns (one
 * sentence each, 8 streams back to back) on the embedded eSpeak NG pool,
 * alone and while 4 streams read 20-sentence narrations on the same workers.
 * The engine in-process, no server: this measures the pool's scheduling
 * (sentence jobs, a waiting request's first sentence ahead of another's next
 * one), which every transport shares. Slices of the two loads alternate.
 * Run: `npm run build && node dist/bench/mixed-latency.js`.
 */
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num, type Cell } from './lib/table.js';

const SHORT_STREAMS = 8;
const NARRATION_STREAMS = 4;
const NARRATION = 'The river wound slowly through the valley, past the old mill and the quiet farms. '.repeat(20);
const TURNS = ['Thanks for calling, your order has shipped.', 'Please hold while I transfer you.', 'Good morning, how can I help you today?'];

interface MixedSlice {
  /** First-chunk times of the short turns finished inside the window, ms. */
  firsts: number[];
  narrationSeconds: number;
  seconds: number;
}

async function slice(pool: EspeakPool, seconds: number, narrations: number): Promise<MixedSlice> {
  const voice = NAMED_VOICES.find((v) => v.id === 'sarah')!;
  const deadline = performance.now() + seconds * 1000;
  const firsts: number[] = [];
  let narrated = 0;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  const loop = async (text: (i: number) => string, short: boolean) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const started = performance.now();
      let first = -1;
      try {
        for await (const chunk of pool.synthesize({ text: text(i), voice, speed: 1, wordTimings: false }, controller.signal)) {
          if (first < 0) first = performance.now() - started;
          // Narration audio counts as it arrives: a narration is longer than a slice.
          if (!short && performance.now() <= deadline) narrated += chunk.samples.length / pool.sampleRate;
        }
      } catch (err) {
        if (controller.signal.aborted) return;
        throw err;
      }
      if (performance.now() > deadline) return;
      if (short) firsts.push(first);
    }
  };
  await Promise.all([
    ...Array.from({ length: narrations }, () => loop(() => NARRATION, false)),
    ...Array.from({ length: SHORT_STREAMS }, (_, k) => loop((i) => TURNS[(i + k) % TURNS.length], true)),
  ]);
  clearTimeout(timer);
  return { firsts, narrationSeconds: narrated, seconds };
}

export async function runMixedLatency(): Promise<{ markdown: string }> {
  const seconds = sliceSeconds(3);
  const roundCount = rounds(3);
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  const pool = new EspeakPool({ id: 'espeak', workers: 2, queueLimit: 256, highWater: 32, logger: createLogger('silent') });
  await pool.start();
  const alone: MixedSlice[] = [];
  const mixed: MixedSlice[] = [];
  try {
    note(`mixed latency: warm-up, then ${roundCount} rounds of ${seconds} s slices, turns alone and with narrations`);
    await slice(pool, 2, NARRATION_STREAMS);
    for (let r = 0; r < roundCount; r++) {
      alone.push(await slice(pool, seconds, 0));
      mixed.push(await slice(pool, seconds, NARRATION_STREAMS));
    }
  } finally {
    await pool.stop();
  }
  const row = (label: string, slices: MixedSlice[]): Cell[] => {
    const firsts = slices.flatMap((s) => s.firsts).sort((a, b) => a - b);
    const wall = slices.reduce((n, s) => n + s.seconds, 0);
    return [label, firsts.length, num(firsts.length / wall, 1), num(percentile(firsts, 50), 1), num(percentile(firsts, 99), 1), num(slices.reduce((n, s) => n + s.narrationSeconds, 0) / wall, 1)];
  };
  const markdown = [
    `### Mixed load (eSpeak NG pool in-process, 2 workers; ${SHORT_STREAMS} short-turn streams, with and without ${NARRATION_STREAMS} narration streams of 20 sentences; ${roundCount} slices of ${seconds} s each, alternating)`,
    '',
    markdownTable(
      ['Load', 'Short turns', 'Turns / s', 'First audio p50 ms', 'First audio p99 ms', 'Narration audio s / wall s'],
      [row('short turns alone', alone), row(`short turns + ${NARRATION_STREAMS} narrations`, mixed)],
    ),
    '',
    '- First audio: from `synthesize()` to the first chunk of a short turn. Narration audio counts the chunks that arrived inside the window.',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
  return { markdown };
}

if (isMain(import.meta.url)) console.log((await runMixedLatency()).markdown);
