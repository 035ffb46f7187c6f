/**
 * @module bench/lib/serving-rows
 * The rows of a served-versus-engine table, shared by serving efficiency and
 * neural serving: one row for the in-process baseline (its slices combined)
 * and one per served format (its load slices, the median of its ratios, and
 * audio per CPU-second against the baseline's).
 */
import { median, spread } from './interleave.js';
import { combineLoads, percentile, type LoadResult, type LoadSlice } from './load.js';
import { combineUsage, cores, otherLoad, type Usage } from './proc.js';
import { num, type Cell } from './table.js';

/** One in-process baseline slice. */
export interface BaselineSlice {
  jobs: number;
  audioSeconds: number;
  seconds: number;
  latencies: number[];
  usage: Usage;
}

/** The table's columns, in the order the row builders fill them. */
export const SERVING_COLUMNS = [
  'Path',
  'Output',
  'Completed',
  'Audio s / wall s',
  'Ratio vs raw (median)',
  'Per-slice audio s / wall s',
  'Audio s per CPU s',
  'Ratio per CPU s',
  'p50 ms',
  'p99 ms',
  'Server CPU (cores)',
  'Server main thread (cores)',
  'Load-gen CPU (cores)',
  'Other load on machine (cores)',
  'Peak RSS (MiB)',
];

/** The baseline row, and its audio per CPU-second for the served rows' ratio. */
export function baselineRow(label: string, output: string, slices: BaselineSlice[], rates: number[], digits = 0): { row: Cell[]; perCpu: number } {
  const audio = slices.reduce((n, s) => n + s.audioSeconds, 0);
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const usage = combineUsage(slices.map((s) => s.usage));
  const perCpu = audio / usage.cpuSeconds;
  const row = [
    label,
    output,
    slices.reduce((n, s) => n + s.jobs, 0),
    num(audio / slices.reduce((n, s) => n + s.seconds, 0), 1),
    '1.00',
    spread(rates, digits),
    num(perCpu, 1),
    '1.00',
    num(percentile(latencies, 50), 1),
    num(percentile(latencies, 99), 1),
    num(cores(usage).all, 2),
    num(cores(usage).main, 2),
    '—',
    num(otherLoad(usage), 2),
    '—',
  ];
  return { row, perCpu };
}

/** A served format's row; `audioSeconds` turns its combined load into audio seconds. */
export function servedRow(
  output: string,
  slices: { rate: number; data: LoadSlice }[],
  ratios: number[],
  baselinePerCpu: number,
  audioSeconds: (load: LoadResult) => number,
  digits = 0,
): { row: Cell[]; ratio: number; cpuRatio: number; load: LoadResult; usage: Usage } {
  const load = combineLoads(slices.map((s) => s.data.load));
  const usage = combineUsage(slices.map((s) => s.data.server));
  const used = cores(usage);
  const audio = audioSeconds(load);
  const perCpu = audio / usage.cpuSeconds;
  const ratio = median(ratios);
  const row = [
    'POST /tts/bytes (child process)',
    output,
    load.ok,
    num(audio / load.seconds, 1),
    num(ratio, 2),
    `${spread(slices.map((s) => s.rate), digits)} (ratios ${spread(ratios)})`,
    num(perCpu, 1),
    num(perCpu / baselinePerCpu, 2),
    num(percentile(load.latencies, 50), 1),
    num(percentile(load.latencies, 99), 1),
    num(used.all, 2),
    num(used.main, 2),
    num(load.loadgenCpuSeconds / load.seconds, 2),
    num(otherLoad(usage, load.loadgenCpuSeconds), 2),
    num(usage.peakRssMiB, 0),
  ];
  return { row, ratio, cpuRatio: perCpu / baselinePerCpu, load, usage };
}
