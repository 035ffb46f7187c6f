/**
 * @module test/helpers/gateways
 * Voicegate gateways as real processes (`node dist/src/main.js serve`), as a
 * deployment runs them: each with a config file of its own, an ephemeral
 * loopback port read from its "voicegate ready" log line, and its own data
 * directory; `kill('SIGKILL')` crashes one, `stop()` shuts it down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

/** The tone engine behind both shipped models, at 8 kHz and 10 ms a character: cheap audio for tests about accounts. */
export const TONE_MODELS: Partial<ConfigInput> = {
  engines: { tone: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.1 } },
  models: { 'gepard-1.0': { engine: 'tone' }, omnivoice: { engine: 'tone' } },
};

export interface Gateway {
  url: string;
  pid: number;
  process: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Log lines (parsed JSON) the process wrote at warn level or above. */
  warnings: Record<string, unknown>[];
  /** The last few kilobytes the process wrote to stderr (a crash's stack). */
  stderr(): string;
  /** Sends SIGTERM (or `signal`) and waits for the exit; removes its data directory. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a gateway with `config` (written to a file; the port is its own, and `dataDir` unless the config names one: a gateway restarted on the same one). `prefix` runs it
 * under another command (`['ip', 'netns', 'exec', name]`: inside a network namespace of the test's own).
 */
export async function startGateway(config: Partial<ConfigInput>, timeoutMs = 30_000, prefix: string[] = []): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-gateway-'));
  const file = join(dir, 'config.json');
  // No warm-up before ready (test/warm-up.test.ts covers it): these tests start many gateways.
  const server = { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000, warmUp: false, ...(config.server ?? {}) };
  writeFileSync(file, JSON.stringify({ ...config, dataDir: config.dataDir ?? join(dir, 'data'), server, log: { level: 'info' } }));
  // Only this gateway's own settings: none of the test runner's VOICEGATE_* variables.
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VOICEGATE_'))), VOICEGATE_ESPEAK_WARM_UP_JOBS: '0' };
  const argv = [...prefix, process.execPath, MAIN, 'serve', '--config', file];
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const warnings: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway not ready within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before it was ready: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (typeof entry.level === 'number' && entry.level >= 40) warnings.push(entry);
      if (entry.msg === 'voicegate ready') {
        clearTimeout(timer);
        resolve(String(entry.address));
      }
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    url,
    pid: child.pid!,
    process: child,
    exited,
    warnings,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(force);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Organisations and keys through a gateway's admin HTTP API. */
export async function adminOrg(
  gateway: Gateway,
  adminToken: string,
  input: { credits: number; maxConcurrent?: number | null; rateLimit?: { requests: number; per_seconds: number } | null },
): Promise<{ orgId: string; key: string; auth: Record<string, string> }> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const limits = { max_concurrent: input.maxConcurrent ?? null, rate_limit: input.rateLimit ?? null };
  const created = await fetch(`${gateway.url}/admin/orgs`, { method: 'POST', headers, body: JSON.stringify({ name: 'scale-out', credits: input.credits, limits }) });
  if (created.status !== 201) throw new Error(`creating an organisation: ${created.status} ${await created.text()}`);
  const org = (await created.json()) as { id: string };
  const issued = await fetch(`${gateway.url}/admin/orgs/${org.id}/keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'test' }) });
  if (issued.status !== 201 && issued.status !== 200) throw new Error(`issuing a key: ${issued.status} ${await issued.text()}`);
  const { key } = (await issued.json()) as { key: string };
  return { orgId: org.id, key, auth: { authorization: `Bearer ${key}` } };
}
