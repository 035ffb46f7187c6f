/**
 * @module engines/sherpa/probe
 * Loads a model once in a child process before any worker thread does:
 * sherpa-onnx ends its whole process natively on some bad models (a corrupt
 * graph, malformed tokens, missing metadata) with no exception to catch, so
 * the server never loads a model in-process that has not loaded in a child
 * first. The child's exit code and the last lines it printed become the
 * reason the engine reports.
 */
import { fork } from 'node:child_process';
import type { OfflineTtsConfig } from 'sherpa-onnx-node';

export interface ProbeResult {
  sampleRate: number;
  numSpeakers: number;
}

export class ProbeError extends Error {}

const CHILD = new URL('./probe-child.js', import.meta.url);

export function probeModel(config: OfflineTtsConfig, timeoutMs = 120_000): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    let stderr = '';
    let result: ProbeResult | null = null;
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new ProbeError(`the model did not load within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    child.on('message', (message: ProbeResult) => {
      result = message;
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new ProbeError(`the load probe could not start: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && result) return resolve(result);
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const said = lastLines(stderr);
      reject(new ProbeError(`sherpa-onnx failed to load the model (${how})${said ? `: ${said}` : ''}`));
    });
    child.send(config);
  });
}

/** The last few meaningful lines of the child's output, one line, bounded. */
function lastLines(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at ') && !l.startsWith('Node.js'));
  return lines.slice(-3).join(' | ').slice(0, 500);
}
