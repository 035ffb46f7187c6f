/**
 * @module bench/failover
 * First audio through a PostgreSQL outage: two gateway processes (tone
 * engine) on a private PostgreSQL cluster, four clients streaming SSE
 * requests over both, for a slice with the database up and a slice with it
 * stopped (`pg_ctl stop -m immediate`). During the outage the gateways admit
 * on the credit they hold and journal the charges, so first audio should not
 * slow down: the objective is a p99 during the outage at most 1.5 × the p99
 * before it, in the same run. Needs the PostgreSQL server binaries
 * (`initdb`, `pg_ctl`); skipped with a line saying why without them.
 */
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from '../test/helpers/gateways.js';
import { canRunPrivatePostgres, startPostgres, type PrivatePostgres } from '../test/helpers/private-servers.js';
import { ttsBody } from '../test/helpers/server.js';
import { isMain, note, percentile, sliceSeconds } from './lib/load.js';
import { markdownTable, num } from './lib/table.js';

const ADMIN_TOKEN = 'failover-bench-admin-token-0123';
const CLIENTS = 4;
const BODY = JSON.stringify(ttsBody({ transcript: 'First audio through a database failover.', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 } }));

/** Milliseconds to the first SSE event of one request; null when it was refused or failed. */
async function firstAudio(url: string, auth: Record<string, string>): Promise<number | null> {
  const began = performance.now();
  const response = await fetch(`${url}/tts/sse`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: BODY });
  if (response.status !== 200 || !response.body) {
    await response.arrayBuffer().catch(() => {});
    return null;
  }
  const reader = response.body.getReader();
  const first = await reader.read();
  const ms = performance.now() - began;
  while (!(await reader.read()).done);
  return first.done ? null : ms;
}

/** First-audio times of `CLIENTS` clients for `seconds`, and the requests that were not served. */
async function slice(gateways: Gateway[], auth: Record<string, string>, seconds: number): Promise<{ ms: number[]; failed: number }> {
  const until = performance.now() + seconds * 1000;
  const ms: number[] = [];
  let failed = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; performance.now() < until; i++) {
        const took = await firstAudio(gateways[(c + i) % gateways.length].url, auth).catch(() => null);
        if (took === null) failed++;
        else ms.push(took);
      }
    }),
  );
  return { ms: ms.sort((a, b) => a - b), failed };
}

export async function runFailoverBench(): Promise<{ markdown: string }> {
  if (!canRunPrivatePostgres()) {
    note('failover skipped: the PostgreSQL server binaries (initdb, pg_ctl) are not installed');
    return { markdown: '### First audio through a PostgreSQL outage\n\nSkipped: the PostgreSQL server binaries are not installed.' };
  }
  const seconds = sliceSeconds(6);
  let postgres: PrivatePostgres | null = null;
  let gateways: Gateway[] = [];
  try {
    postgres = await startPostgres();
    const config = {
      ...TONE_MODELS,
      store: { databaseUrl: postgres.url, schema: 'voicegate', poolSize: 4, timeoutMs: 1000 },
      accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0 },
    };
    gateways = await Promise.all([startGateway(config), startGateway(config)]);
    const org = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: 100_000_000 });
    note('failover: warming up');
    await slice(gateways, org.auth, 2);
    note(`failover: ${seconds} s with PostgreSQL up`);
    const before = await slice(gateways, org.auth, seconds);
    await postgres.stop();
    note(`failover: ${seconds} s with PostgreSQL stopped`);
    const during = await slice(gateways, org.auth, seconds);
    await postgres.start();
    const row = (name: string, s: { ms: number[]; failed: number }) => [name, String(s.ms.length), String(s.failed), num(percentile(s.ms, 50)), num(percentile(s.ms, 99))];
    const ratio = percentile(during.ms, 99) / percentile(before.ms, 99);
    const table = markdownTable(['PostgreSQL', 'served', 'refused', 'first audio p50 (ms)', 'p99 (ms)'], [row('up', before), row('stopped', during)]);
    return {
      markdown: [
        '### First audio through a PostgreSQL outage',
        '',
        `Two gateways (tone engine), ${CLIENTS} SSE clients over both, ${seconds} s with the database up, then ${seconds} s with it stopped (\`-m immediate\`): admitted on held credit, charges journaled.`,
        '',
        table,
        '',
        `p99 during the outage ÷ p99 before: ${num(ratio, 2)} (objective ≤ 1.5).`,
      ].join('\n'),
    };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
    await postgres?.destroy();
  }
}

if (isMain(import.meta.url)) console.log((await runFailoverBench()).markdown);
