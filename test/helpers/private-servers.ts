/**
 * @module test/helpers/private-servers
 * A redis-server and a PostgreSQL cluster of a test's own, on free loopback
 * ports in temporary directories, for tests that stop and restart them (the
 * machine's shared servers are used by other test files and never touched).
 * PostgreSQL refuses to run as root, so as root the cluster runs as the
 * `postgres` OS user (`runuser`).
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { closedPort, eventually } from './redis.js';

const run = promisify(execFile);

/** A redis-server of the test's own on `port`, answering once the promise resolves. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  const up = await eventually(
    async () => {
      try {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        probe.disconnect();
        return false;
      }
    },
    5000,
    50,
  );
  probe.disconnect();
  if (!up) child.kill('SIGKILL');
  assert.ok(up, 'redis-server started');
  return child;
}

export async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const PG_BIN = process.env.VOICEGATE_TEST_PG_BIN || '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  url: string;
  port: number;
  /** Starts the server (again) and waits until it accepts connections. */
  start(): Promise<void>;
  /**
   * Stops it at once (`pg_ctl stop -m immediate`: connections are cut, as in a crash), or with
   * `fast` (sessions are ended and the server shuts down cleanly, as a planned failover does).
   */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

/** Whether a private cluster can be made here (the PostgreSQL server binaries are installed). */
export function canRunPrivatePostgres(): boolean {
  return existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
}

/** A fresh cluster in a temporary directory on a free port, started. */
export async function startPostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const pgRun = (bin: string, args: string[]) => run(asRoot ? 'runuser' : join(PG_BIN, bin), asRoot ? ['-u', 'postgres', '--', join(PG_BIN, bin), ...args] : args, { cwd: dir });
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await closedPort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=16MB`;
  const accepting = () =>
    eventually(
      async () => {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
        client.on('error', () => {});
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => {});
        }
      },
      20_000,
      100,
    );
  const instance: PrivatePostgres = {
    url,
    port,
    async start() {
      await pgRun('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), 'start', '-w', '-t', '30']);
      assert.ok(await accepting(), 'private PostgreSQL accepts connections');
    },
    async stop(mode = 'immediate') {
      await pgRun('pg_ctl', ['-D', data, 'stop', '-m', mode, '-w']).catch(() => {});
    },
    async destroy() {
      await instance.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await instance.start();
  return instance;
}
