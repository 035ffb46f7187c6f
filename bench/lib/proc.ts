/**
 * @module bench/lib/proc
 * Resource figures for a process read from /proc (Linux): CPU time of the
 * whole process and of its main thread, current and peak resident memory,
 * and a sampler that polls the resident size while a load runs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime in seconds from a /proc stat file (the comm field may hold spaces and parentheses). */
function statCpuSeconds(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 3 (state) is fields[0]; utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return NaN;
  }
}

/** Busy CPU seconds of the whole machine so far (all CPUs, every process, from /proc/stat). */
export function machineCpuSeconds(): number {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / clockTicks();
  } catch {
    return NaN;
  }
}

export interface CpuTimes {
  /** All threads of the process, seconds. */
  process: number;
  /** The main thread (the event loop), seconds. */
  main: number;
}

export function cpuTimes(pid: number): CpuTimes {
  return { process: statCpuSeconds(`/proc/${pid}/stat`), main: statCpuSeconds(`/proc/${pid}/task/${pid}/stat`) };
}

/** A field of /proc/<pid>/status in MiB (VmRSS, VmHWM), or NaN once the process is gone. */
export function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Polls VmRSS every `intervalMs` until stopped; `stop()` returns the peak seen, in MiB. */
export function sampleRss(pid: number, intervalMs = 100): { stop(): number } {
  let peak = statusMiB(pid, 'VmRSS');
  const timer = setInterval(() => {
    const rss = statusMiB(pid, 'VmRSS');
    if (!(rss <= peak)) peak = Number.isFinite(peak) ? Math.max(peak, rss) : rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = statusMiB(pid, 'VmRSS');
      return Number.isFinite(rss) ? Math.max(peak, rss) : peak;
    },
  };
}

export interface Usage {
  /** CPU seconds of all the process's threads. */
  cpuSeconds: number;
  /** CPU seconds of the main thread (the event loop). */
  mainCpuSeconds: number;
  wallSeconds: number;
  /** Busy CPU seconds of the whole machine over the same window (to tell other load apart). */
  machineCpuSeconds: number;
  /** Peak VmRSS seen while measuring, MiB. */
  peakRssMiB: number;
}

/** Measures a process's CPU use and resident memory between start and `stop()`. */
export function measureProcess(pid: number): { stop(): Usage } {
  const before = cpuTimes(pid);
  const machineBefore = machineCpuSeconds();
  const started = performance.now();
  const rss = sampleRss(pid);
  return {
    stop() {
      const after = cpuTimes(pid);
      return {
        cpuSeconds: after.process - before.process,
        mainCpuSeconds: after.main - before.main,
        wallSeconds: (performance.now() - started) / 1000,
        machineCpuSeconds: machineCpuSeconds() - machineBefore,
        peakRssMiB: rss.stop(),
      };
    },
  };
}

/** Several measurements of one process taken as one: times add up, the peak is the highest. */
export function combineUsage(list: Usage[]): Usage {
  return {
    cpuSeconds: list.reduce((n, u) => n + u.cpuSeconds, 0),
    mainCpuSeconds: list.reduce((n, u) => n + u.mainCpuSeconds, 0),
    wallSeconds: list.reduce((n, u) => n + u.wallSeconds, 0),
    machineCpuSeconds: list.reduce((n, u) => n + u.machineCpuSeconds, 0),
    peakRssMiB: Math.max(...list.map((u) => u.peakRssMiB)),
  };
}

/** Cores kept busy on average: all threads, and the main thread alone (1.0 = event loop never idle). */
export function cores(usage: Usage): { all: number; main: number } {
  return { all: usage.cpuSeconds / usage.wallSeconds, main: usage.mainCpuSeconds / usage.wallSeconds };
}

/**
 * Cores kept busy by everything else on the machine while `usage` was measured: other users'
 * processes, builds… `ownCpuSeconds` is CPU of our other processes in that window (the load generator).
 */
export function otherLoad(usage: Usage, ownCpuSeconds = 0): number {
  return Math.max(0, usage.machineCpuSeconds - usage.cpuSeconds - ownCpuSeconds) / usage.wallSeconds;
}

/**
 * Waits (at most `maxSeconds`) until the machine has been quiet — under `threshold` busy cores — for a
 * whole second, so a benchmark does not start in the middle of someone else's build. Resolves with
 * the seconds waited, or null when it gave up.
 */
export async function waitForQuiet(maxSeconds = 8, threshold = 0.15): Promise<number | null> {
  const started = performance.now();
  let last = machineCpuSeconds();
  let quietFor = 0;
  while (performance.now() - started < maxSeconds * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = machineCpuSeconds();
    quietFor = (now - last) / 0.25 < threshold ? quietFor + 0.25 : 0;
    last = now;
    if (quietFor >= 1) return (performance.now() - started) / 1000;
  }
  return Number.isNaN(last) ? 0 : null;
}
