/**
 * @module bench/lib/child
 * Starts a server script in a child process, so the load generator and the
 * server under test never share a thread. The child prints one JSON line
 * `{"url": ...}` on stdout once it listens; `stop()` sends SIGTERM, waits for
 * a clean exit and reports the process's lifetime peak RSS (VmHWM).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { statusMiB } from './proc.js';

export interface ChildServer {
  url: string;
  pid: number;
  /** Everything the child reported in its ready line. */
  ready: Record<string, unknown>;
  /** Stops the child; resolves with its lifetime peak RSS in MiB. */
  stop(): Promise<{ peakRssMiB: number }>;
}

/**
 * Extra node flags for every child: `BENCH_CPU_PROF=<dir>` writes a V8 CPU profile per child;
 * `BENCH_NODE_ARGS` (space-separated) adds node or V8 flags, for trying one out.
 */
function childExecArgv(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  const extra = process.env.BENCH_NODE_ARGS?.split(/\s+/u).filter(Boolean) ?? [];
  return [...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...extra];
}

/** `env`: variables added to this process's environment for the child (a child's own opt-ins). */
export async function startChild(script: URL, args: string[] = [], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, [...childExecArgv(), fileURLToPath(script), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await readyLine(child, timeoutMs).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const pid = child.pid!;
  return {
    url: String(ready.url),
    pid,
    ready,
    async stop() {
      const peakRssMiB = statusMiB(pid, 'VmHWM');
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(force);
      return { peakRssMiB };
    },
  };
}

function readyLine(child: ChildProcess, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`child did not report ready within ${timeoutMs} ms`)), timeoutMs);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line) as Record<string, unknown>);
      } catch {
        reject(new Error(`child's first line is not JSON: ${line}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with code ${code} before it was ready`));
    });
  });
}

/** Prints the ready line for a parent started through `startChild`. */
export function reportReady(details: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(details)}\n`);
}
