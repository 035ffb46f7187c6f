/**
 * @module test/helpers/containers
 * podman as the deployment tests drive it: the machine's podman with a
 * containers.conf of the test's own (runtime runc, nofile/nproc 1024, the
 * limits these hosts allow), the image's `debian:trixie-slim` base built
 * with debootstrap when it is not in podman's store (kept there for later
 * runs), the image built from the repository's Dockerfile, and containers,
 * volumes and compose projects named per run and removed afterwards.
 * Without podman the tests skip, except under CI, where .ci/run installs it.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until as poll } from './poll.js';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));
export const BASE_IMAGE = 'docker.io/library/debian:trixie-slim';
export const IMAGE = 'localhost/voicegate:test';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

function which(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, command)));
}

/** Why the deployment tests cannot run here, or null. Under CI a missing tool fails instead of skipping. */
export function containersUnavailable(tools: string[] = ['podman', 'runc']): string | null {
  const missing = tools.filter((tool) => !which(tool));
  if (missing.length === 0) return null;
  const why = `${missing.join(', ')} not installed (apt-get install podman runc debootstrap podman-compose)`;
  if (process.env.CI) throw new Error(`deployment tests need ${why}`);
  return why;
}

let conf: string | null = null;
/** A containers.conf of this run's own: runc, and the rlimits these hosts allow a container. */
function containersConf(): string {
  if (conf) return conf;
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-containers-'));
  conf = join(dir, 'containers.conf');
  writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n\n[engine]\nruntime = "runc"\n');
  return conf;
}

export const containerEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, CONTAINERS_CONF: containersConf(), ...extra });

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (or `timeoutMs`); never throws for a non-zero exit. */
export function run(command: string, args: string[], options: { timeoutMs?: number; env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: containerEnv(options.env), cwd: options.cwd ?? REPO, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 << 20, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code as number) : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) + (err && code === -1 ? `\n${err.message}` : '') });
      },
    );
  });
}

/** podman …, throwing with its output when it fails. */
export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const result = await run('podman', args, { timeoutMs });
  if (result.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${result.code}:\n${result.stderr.slice(-3000)}${result.stdout.slice(-2000)}`);
  return result.stdout.trim();
}

/** The base image, from debootstrap when podman's store lacks it (≈ 40 s, once per machine). */
export async function ensureBase(): Promise<void> {
  if ((await run('podman', ['image', 'exists', BASE_IMAGE])).code === 0) return;
  const result = await run('bash', [join(REPO, 'scripts/debian-base.sh'), BASE_IMAGE], { timeoutMs: 600_000 });
  if (result.code !== 0) throw new Error(`building ${BASE_IMAGE} failed:\n${result.stderr.slice(-3000)}`);
}

/** Builds the repository's Dockerfile offline from the base (npm trusts the host's CA bundle, as behind a TLS proxy). */
export async function buildImage(tag = IMAGE): Promise<{ seconds: number }> {
  await ensureBase();
  const started = performance.now();
  const secret = existsSync(CA_BUNDLE) ? ['--secret', `id=extra_ca,src=${CA_BUNDLE}`] : [];
  // --format docker: an OCI image has no HEALTHCHECK.
  const result = await run('podman', ['build', '--pull=never', '--format', 'docker', ...secret, '-t', tag, '-f', join(REPO, 'Dockerfile'), REPO], { timeoutMs: 1_200_000 });
  if (result.code !== 0) throw new Error(`podman build failed:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-3000)}`);
  return { seconds: Math.round((performance.now() - started) / 100) / 10 };
}

/** Builds one of test/deploy/stand-ins/<name> as `localhost/voicegate-stand-in/<name>:test`. */
export async function buildStandIn(name: 'postgres' | 'redis' | 'haproxy'): Promise<string> {
  await ensureBase();
  const tag = `localhost/voicegate-stand-in/${name}:test`;
  const dir = join(REPO, 'test/deploy/stand-ins', name);
  const result = await run('podman', ['build', '--pull=never', '-t', tag, dir], { timeoutMs: 900_000 });
  if (result.code !== 0) throw new Error(`building the ${name} stand-in failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
  return tag;
}

/** A name unique to this run, for containers, volumes and compose projects. */
export const runName = (prefix: string): string => `${prefix}${randomBytes(4).toString('hex')}`;

/** The host port podman published for a container's port. */
export async function publishedPort(container: string, port: number): Promise<number> {
  const out = await podman(['port', container, `${port}/tcp`]);
  const match = /:(\d+)\s*$/m.exec(out);
  if (!match) throw new Error(`no published port for ${container}:${port}: ${out}`);
  return Number(match[1]);
}

/**
 * The shared bounded poll (`poll.ts`) for a container coming up: a check that throws (a port not
 * answering yet) counts as not yet; resolves with the value `check` gives, fails naming `what`.
 */
export function until<T>(check: () => Promise<T | null | undefined | false>, ms: number, what: string): Promise<T> {
  return poll(() => check().catch(() => null), { timeoutMs: ms, intervalMs: 250, what }) as Promise<T>;
}

/** Follows a container's logs as they come (for the bootstrap key and progress lines). */
export function followLogs(container: string): { text(): string; stop(): void } {
  let text = '';
  const child = spawn('podman', ['logs', '-f', container], { env: containerEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { text: () => text, stop: () => void child.kill() };
}
