/**
 * @module bench/lib/machine
 * The machine and date line every benchmark report carries.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function nproc(): string {
  try {
    return execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    return String(availableParallelism());
  }
}

/** "Machine: 2 CPUs (nproc), <model>, Node v20…". */
export function machineLine(): string {
  return `Machine: ${nproc()} CPUs (nproc), ${cpuModel()}, Node ${process.version}`;
}
