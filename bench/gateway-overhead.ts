/**
 * @module bench/gateway-overhead
 * Gateway overhead: requests/s for a short transcript on the zero-cost `tone`
 * engine (raw pcm_s16le at its native 24000 Hz), against a bare `node:http`
 * server that parses the same JSON body and returns a pre-made clip of the
 * same size and content type. Voicegate runs accounts off (the gateway itself;
 * the target applies here) and accounts on with limits lifted (API key check,
 * a reservation and a charge per request) on SQLite and on PostgreSQL, with
 * the p99 latency that admission and charge add for each store, and PostgreSQL's
 * requests per second against SQLite's, each on a line of its own against the
 * issue's targets. Every server is a child process under the same autocannon
 * settings, in alternating slices (see lib/interleave); peak RSS of each child
 * is recorded. `BENCH_GATEWAY_ROWS=off,pg` runs only some rows; `BENCH_PG_TRACE=1`
 * has each child print where its PostgreSQL time went (lib/pg-trace).
 * Run: `npm run build && node dist/bench/gateway-overhead.js`.
 */
import pg from 'pg';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { combineLoads, isMain, loadSlice, note, percentile, rounds, runLoad, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { combineUsage, cores, otherLoad, waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict, type Cell } from './lib/table.js';

export const TARGET = 0.75;
const CONNECTIONS = 16;
const TONE_RATE = 24000;

const BODY = {
  model_id: 'tone-bench',
  transcript: 'Hello.',
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: TONE_RATE },
};

const TONE_MODEL = { models: { 'tone-bench': { extends: 'gepard-1.0', engine: 'tone' } } };

const ACCOUNTS_ON = { enabled: true, startingCredits: 1_000_000_000, defaultLimits: { maxConcurrent: null, rateLimit: null } };

/**
 * Accounts on PostgreSQL too, unless BENCH_DATABASE_URL=off: the local server by default, in a schema
 * of its own that is dropped afterwards.
 */
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = `bench_${process.pid}_${Date.now().toString(36)}`;

/**
 * The rows measured, BENCH_GATEWAY_ROWS (comma-separated, default all): `off` (accounts off: the
 * gateway, and the reference of the p99 the accounts-on rows add), `sqlite`, `pg` (left out anyway
 * when BENCH_DATABASE_URL=off). The bare server always runs.
 */
const ROW_IDS = ['off', 'sqlite', 'pg'] as const;
type RowId = (typeof ROW_IDS)[number];
function chosenRows(): Set<RowId> {
  const raw = process.env.BENCH_GATEWAY_ROWS;
  if (!raw) return new Set(ROW_IDS);
  const asked = raw.split(',').map((id) => id.trim()).filter(Boolean);
  const unknown = asked.filter((id) => !(ROW_IDS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new Error(`BENCH_GATEWAY_ROWS: unknown row ${unknown.join(', ')} (rows: ${ROW_IDS.join(', ')})`);
  return new Set(asked as RowId[]);
}
const ROWS = chosenRows();

/** The Voicegate configurations measured, each against the same bare server. */
const VARIANTS = [
  { row: 'off' as RowId, id: 'Voicegate, accounts off', store: '', overrides: { ...TONE_MODEL, accounts: { enabled: false } }, primary: true },
  { row: 'sqlite' as RowId, id: 'Voicegate, accounts on (no limits)', store: 'SQLite', overrides: { ...TONE_MODEL, accounts: ACCOUNTS_ON }, primary: false },
  {
    row: 'pg' as RowId,
    id: 'Voicegate, accounts on, PostgreSQL (no limits)',
    store: 'PostgreSQL',
    overrides: { ...TONE_MODEL, accounts: ACCOUNTS_ON, store: { databaseUrl: DATABASE_URL, schema: PG_SCHEMA } },
    primary: false,
  },
].filter((variant) => ROWS.has(variant.row) && !(variant.row === 'pg' && DATABASE_URL === 'off'));

/** The issue's PostgreSQL targets: p99 added by admission and charge, and accounts-on requests/s against SQLite's. */
export const PG_P99_ADDED_MS = 5;
export const PG_OVER_SQLITE = 0.8;

async function dropBenchSchema(): Promise<void> {
  if (!VARIANTS.some((variant) => variant.row === 'pg')) return;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${PG_SCHEMA}" CASCADE`);
  } catch (err) {
    note(`could not drop the benchmark schema ${PG_SCHEMA}: ${(err as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface GatewayReport {
  markdown: string;
  /** Voicegate (accounts off)/bare requests per second (median over slices). */
  ratio: number;
}

interface Target {
  id: string;
  server: ChildServer;
  headers: Record<string, string>;
}

/** Voicegate's answer to BODY: its size and content type, which the bare server then mimics. */
async function referenceAnswer(target: Target): Promise<{ bytes: number; contentType: string }> {
  const res = await fetch(`${target.server.url}/tts/bytes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: JSON.stringify(BODY),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`${target.id} answered HTTP ${res.status} to the gateway benchmark's request`);
  return { bytes, contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
}

function loadOptions(target: Target, seconds: number): LoadOptions {
  return { url: target.server.url, path: '/tts/bytes', bodies: [BODY], connections: CONNECTIONS, seconds, headers: target.headers };
}

async function slice(target: Target, seconds: number): Promise<Slice<LoadSlice>> {
  const data = await loadSlice(target.server.pid, loadOptions(target, seconds));
  return { rate: data.load.ok / data.load.seconds, data };
}

export async function runGatewayOverhead(): Promise<GatewayReport> {
  const seconds = sliceSeconds();
  const roundCount = rounds(3);
  const children: ChildServer[] = [];
  const peaks = new Map<ChildServer, number>();
  const notes: string[] = [];
  let markdown = '';
  let ratio = NaN;
  try {
    const waited = await waitForQuiet();
    if (waited === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
    note('gateway overhead: starting the Voicegate children (tone engine) and the bare node:http child');
    const targets: Target[] = [];
    for (const variant of VARIANTS) {
      const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(variant.overrides)]);
      children.push(server);
      const apiKey = server.ready.apiKey;
      targets.push({ id: variant.id, server, headers: typeof apiKey === 'string' ? { authorization: `Bearer ${apiKey}` } : {} });
    }
    const answers = await Promise.all(targets.map(referenceAnswer));
    if (answers.some((a) => a.bytes !== answers[0].bytes)) notes.push(`Voicegate configurations answered with different sizes: ${answers.map((a) => a.bytes).join(', ')} bytes.`);
    const reference = answers[0];
    const bareServer = await startChild(new URL('./bare-child.js', import.meta.url), [String(reference.bytes), reference.contentType]);
    children.push(bareServer);
    const bare: Target = { id: 'bare', server: bareServer, headers: {} };

    note(`warm-up, then ${roundCount} slices of ${seconds} s per Voicegate configuration, each between bare slices; ${CONNECTIONS} connections`);
    await runLoad(loadOptions(bare, 1));
    for (const target of targets) await runLoad(loadOptions(target, 2));
    const result = await interleave(
      () => slice(bare, seconds),
      targets.map((target) => ({ id: target.id, run: () => slice(target, seconds) })),
      roundCount,
    );
    for (const child of children.splice(0)) peaks.set(child, (await child.stop()).peakRssMiB);

    const perCpu = (slices: Slice<LoadSlice>[]) => {
      const load = combineLoads(slices.map((s) => s.data.load));
      return load.ok / combineUsage(slices.map((s) => s.data.server)).cpuSeconds;
    };
    const barePerCpu = perCpu(result.reference);
    const row = (name: string, server: ChildServer, slices: Slice<LoadSlice>[], ratioCell: string, perSlice: string): Cell[] => {
      const load = combineLoads(slices.map((s) => s.data.load));
      const usage = combineUsage(slices.map((s) => s.data.server));
      const used = cores(usage);
      if (load.failed) notes.push(`${name}: ${load.failed} failed requests (non-2xx, errors or timeouts).`);
      return [
        name,
        num(load.ok / load.seconds, 0),
        ratioCell,
        perSlice,
        num(perCpu(slices), 0),
        num(perCpu(slices) / barePerCpu, 2),
        num(percentile(load.latencies, 50), 2),
        num(percentile(load.latencies, 99), 2),
        load.failed,
        num(used.all, 2),
        num(used.main, 2),
        num(load.loadgenCpuSeconds / load.seconds, 2),
        num(otherLoad(usage, load.loadgenCpuSeconds), 2),
        num(usage.peakRssMiB, 0),
        num(peaks.get(server), 0),
      ];
    };
    const rows: Cell[][] = [row('bare node:http', bareServer, result.reference, '1.00', spread(result.reference.map((s) => s.rate), 0))];
    const verdicts: string[] = [];
    for (const [i, target] of targets.entries()) {
      const { slices, ratios } = result.candidates.get(target.id)!;
      const targetRatio = median(ratios);
      const cpuNote = `per server CPU-second ${num(perCpu(slices) / barePerCpu, 2)} of bare`;
      if (VARIANTS[i].primary) {
        ratio = targetRatio;
        verdicts.push(`${verdict(`${target.id}: Voicegate/bare requests per second`, targetRatio, TARGET)}; ${cpuNote}`);
      } else {
        verdicts.push(`${target.id}: Voicegate/bare requests per second ${num(targetRatio, 2)}; ${cpuNote} (for information; the target is set for the gateway alone)`);
      }
      rows.push(row(`${target.id} (/tts/bytes, tone engine)`, target.server, slices, num(targetRatio, 2), `${spread(slices.map((s) => s.rate), 0)} (ratios ${spread(ratios)})`));
    }
    // What admission (key, limits, reservation) plus the charge add at the tail, per store.
    const p99 = (id: string) => percentile(combineLoads(result.candidates.get(id)!.slices.map((s) => s.data.load)).latencies, 99);
    const off = VARIANTS.find((variant) => variant.row === 'off');
    const sqlite = VARIANTS.find((variant) => variant.row === 'sqlite');
    const postgres = VARIANTS.find((variant) => variant.row === 'pg');
    const gateway = off ? p99(off.id) : NaN;
    // Other processes' CPU (PostgreSQL's own backend aside) makes these lines a measure of the machine, not of the code.
    const busy = (id: string, allowance: number) => {
      const slices = result.candidates.get(id)!.slices;
      const load = combineLoads(slices.map((s) => s.data.load));
      return otherLoad(combineUsage(slices.map((s) => s.data.server)), load.loadgenCpuSeconds) - allowance;
    };
    const crowded = Math.max(...VARIANTS.map((variant) => busy(variant.id, variant.row === 'pg' ? 0.5 : 0)));
    const caveat = crowded > 0.25 ? ` (other load up to ${num(crowded, 2)} cores beyond PostgreSQL's: not comparable with a quiet run)` : '';
    for (const variant of [postgres, sqlite]) {
      if (!variant) continue;
      if (!off) {
        verdicts.push(`${variant.store}: p99 added by admission and charge not measured (the accounts-off row is left out)`);
        continue;
      }
      const added = p99(variant.id) - gateway;
      const target = variant === postgres ? ` (target ≤ ${PG_P99_ADDED_MS} ms) — **${added <= PG_P99_ADDED_MS ? 'MET' : 'MISSED'}**` : '';
      verdicts.push(`**${variant.store}: p99 added by admission and charge** (accounts-on p99 ${num(p99(variant.id), 2)} − accounts-off p99 ${num(gateway, 2)}): **${num(added, 2)} ms**${target}${caveat}`);
    }
    if (sqlite && postgres) {
      const rate = (id: string) => {
        const load = combineLoads(result.candidates.get(id)!.slices.map((s) => s.data.load));
        return load.ok / load.seconds;
      };
      const pgSlices = result.candidates.get(postgres.id)!.slices;
      const sqliteSlices = result.candidates.get(sqlite.id)!.slices;
      const perRound = pgSlices.map((s, i) => s.rate / sqliteSlices[i].rate);
      const over = rate(postgres.id) / rate(sqlite.id);
      verdicts.push(`${verdict('**PostgreSQL ÷ SQLite accounts-on requests/s**', over, PG_OVER_SQLITE)} (per round ${spread(perRound)})${caveat}`);
    }
    const table = markdownTable(
      [
        'Server (child process)',
        'Req/s',
        'Ratio vs bare (median)',
        'Per-slice req/s',
        'Req per server CPU s',
        'Ratio per CPU s',
        'p50 ms',
        'p99 ms',
        'Failed',
        'Server CPU (cores)',
        'Server main thread (cores)',
        'Load-gen CPU (cores)',
        'Other load on machine (cores)',
        'Peak RSS under load (MiB)',
        'VmHWM (MiB)',
      ],
      rows,
    );
    markdown = [
      `### Gateway overhead ("${BODY.transcript}", raw pcm_s16le ${TONE_RATE} Hz, ${reference.bytes} bytes per answer; ${CONNECTIONS} connections, pipelining 1, ${roundCount} slices of ${seconds} s per Voicegate row)`,
      '',
      table,
      '',
      ...verdicts.map((v) => `- ${v}`),
      '- Ratio vs bare = median over slices of (Voicegate slice req/s ÷ mean of the bare slices just before and after it).',
      '- Other load on machine = busy CPU from /proc/stat minus the server and the benchmark process.',
      ...notes.map((n) => `- ${n}`),
    ].join('\n');
  } finally {
    for (const child of children) await child.stop();
    await dropBenchSchema();
  }
  return { markdown, ratio };
}

if (isMain(import.meta.url)) {
  const report = await runGatewayOverhead();
  console.log(report.markdown);
}
