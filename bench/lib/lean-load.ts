/**
 * @module bench/lib/lean-load
 * A load generator for large answers: `connections` keep-alive loops of
 * `node:http` POSTs that count body bytes as they arrive and keep nothing.
 * autocannon appends every body to a string, which for ~200 KB audio
 * answers costs the shared 2 cores ~0.2 of a core (BENCHMARKS.md) and so
 * lowers the served side of a served ÷ engine ratio for reasons that are
 * not the server's. Same result shape as `runLoad`: only requests that
 * complete inside the window count; those in flight when it closes are
 * dropped.
 */
import { Agent, request } from 'node:http';
import type { LoadOptions, LoadResult } from './load.js';

export async function runLeanLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.path, options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const bodies = options.bodies.map((b) => Buffer.from(JSON.stringify(b)));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let bodyBytes = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + options.seconds * 1000;

  const once = (body: Buffer): Promise<{ status: number; bytes: number }> =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length, ...options.headers } },
        (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
          res.on('error', reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });

  const loop = async () => {
    for (let i = 0; performance.now() < deadline; i++) {
      const t0 = performance.now();
      try {
        const { status, bytes } = await once(bodies[i % bodies.length]);
        if (performance.now() > deadline) return;
        if (status >= 200 && status < 300) {
          ok++;
          bodyBytes += bytes;
          latencies.push(performance.now() - t0);
        } else failed++;
      } catch {
        if (performance.now() > deadline) return;
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const seconds = Math.min(performance.now(), deadline) - started;
  agent.destroy();
  const cpu = process.cpuUsage(cpuBefore);
  return { ok, failed, bodyBytes, seconds: seconds / 1000, latencies: latencies.sort((a, b) => a - b), loadgenCpuSeconds: (cpu.user + cpu.system) / 1e6 };
}
