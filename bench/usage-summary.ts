/**
 * @module bench/usage-summary
 * Usage summaries over 1,000,000 ledger rows (a month: 10 organisations × 2
 * keys, 2 models, 2 endpoints, spread evenly; one row in ten a later batch of
 * a WebSocket turn, one failure per hundred rows) on both stores: a month
 * grouped by day × model, for every organisation and for one, on whole hours
 * and with partial hours at both ends (read from the raw rows). Target: p99
 * ≤ 200 ms on each store. The rows are written straight in SQL (PostgreSQL
 * with its triggers off and the rollup built in one statement, as its
 * migration does) so the fill takes seconds, not the hours a million charges
 * through the server would.
 * Run: `npm run build && node dist/bench/usage-summary.js` (`BENCH_DATABASE_URL`: the PostgreSQL, `off` to skip it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store, UsageQuery } from '../src/store/store.js';
import { isMain, note, percentile } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { markdownTable, num } from './lib/table.js';

export const TARGET_P99_MS = 200;
const ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 1_000_000);
const ORGS = 10;
const START = Date.UTC(2026, 10, 1);
const SPAN_MS = 30 * 86_400_000;
const ITERATIONS = 60;

const orgId = (i: number) => `org_bench_${i % ORGS}`;

function queries(): { label: string; query: UsageQuery }[] {
  const whole = { from: new Date(START).toISOString(), to: new Date(START + SPAN_MS).toISOString() };
  const edges = { from: new Date(START + 17 * 60_000 + 321).toISOString(), to: new Date(START + SPAN_MS - 18 * 60_000).toISOString() };
  return [
    { label: 'every organisation, whole hours', query: { ...whole, groupBy: ['day', 'model'] } },
    { label: 'every organisation, partial hours at both ends', query: { ...edges, groupBy: ['day', 'model'] } },
    { label: 'one organisation, partial hours at both ends', query: { ...edges, groupBy: ['day', 'model'], orgId: orgId(3) } },
  ];
}

async function measure(store: Store): Promise<{ label: string; p50: number; p99: number; rows: number }[]> {
  const out = [];
  for (const { label, query } of queries()) {
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < ITERATIONS + 5; i++) {
      const started = performance.now();
      rows = (await store.usage.summary(query)).length;
      if (i >= 5) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    out.push({ label, p50: percentile(times, 50), p99: percentile(times, 99), rows });
  }
  return out;
}

async function orgsOf(store: Store): Promise<void> {
  for (let i = 0; i < ORGS; i++) await store.orgs.create({ id: orgId(i), name: 'bench', limits: { maxConcurrent: null, rateLimit: null } });
}

async function sqliteRun() {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-bench-usage-'));
  const path = join(dir, 'voicegate.sqlite');
  const store = openSqliteStore(path);
  try {
    await orgsOf(store);
    const started = performance.now();
    const db = new Database(path);
    const insert = db.prepare(
      `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, model, endpoint, characters, created_at) VALUES (?, 'charge', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const failure = db.prepare(`INSERT INTO request_failures (org_id, key_id, request_id, model, endpoint, code, created_at) VALUES (?, ?, ?, ?, ?, 'engine_failed', ?)`);
    db.transaction(() => {
      for (let i = 0; i < ROWS; i++) {
        const at = new Date(START + Math.floor((i * SPAN_MS) / ROWS)).toISOString();
        const credits = 20 + (i % 180);
        insert.run(orgId(i), -credits, `key_${i % (ORGS * 2)}`, `req_${i}`, `req_${i}/${i % 10 === 9 ? 1 : 0}`, i % 3 ? 'sonic' : 'gepard-1.0', i % 2 ? 'tts.bytes' : 'tts.websocket', credits, at);
        if (i % 100 === 50) failure.run(orgId(i), `key_${i % (ORGS * 2)}`, `fail_${i}`, 'sonic', 'tts.bytes', at);
      }
    })();
    db.close();
    note(`usage summary: SQLite filled with ${ROWS} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return await measure(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresRun(url: string) {
  const schema = `vg_bench_usage_${process.pid}`;
  const store = await openPostgresStore({ url, schema, poolSize: 4, timeoutMs: 60_000 });
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await orgsOf(store);
    const started = performance.now();
    await client.query('ALTER TABLE ledger DISABLE TRIGGER USER');
    await client.query('ALTER TABLE request_failures DISABLE TRIGGER USER');
    await client.query(
      `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, model, endpoint, characters, created_at)
       SELECT 'org_bench_' || (i % $1), 'charge', -(20 + i % 180), 'key_' || (i % ($1 * 2)), 'req_' || i, 'req_' || i || '/' || CASE WHEN i % 10 = 9 THEN 1 ELSE 0 END,
         CASE WHEN i % 3 = 0 THEN 'gepard-1.0' ELSE 'sonic' END, CASE WHEN i % 2 = 1 THEN 'tts.bytes' ELSE 'tts.websocket' END, 20 + i % 180,
         to_timestamp($2 / 1000.0) + (i * ($3::bigint / $4::bigint)) * interval '1 millisecond'
       FROM generate_series(0, $4 - 1) AS i`,
      [ORGS, START, SPAN_MS, ROWS],
    );
    await client.query(
      `INSERT INTO request_failures (org_id, key_id, request_id, model, endpoint, code, created_at)
       SELECT 'org_bench_' || (i % $1), 'key_' || (i % ($1 * 2)), 'fail_' || i, 'sonic', 'tts.bytes', 'engine_failed', to_timestamp($2 / 1000.0) + (i * ($3::bigint / $4::bigint)) * interval '1 millisecond'
       FROM generate_series(0, $4 - 1) AS i WHERE i % 100 = 50`,
      [ORGS, START, SPAN_MS, ROWS],
    );
    await client.query('ALTER TABLE ledger ENABLE TRIGGER USER');
    await client.query('ALTER TABLE request_failures ENABLE TRIGGER USER');
    // The rollup as the triggers would have kept it (the migration's own statement, failures added).
    await client.query(
      `INSERT INTO usage_hourly (hour, org_id, key_id, model, endpoint, credits, characters, requests, failed_requests)
       SELECT h, org_id, key_id, model, endpoint, SUM(credits), SUM(characters), SUM(requests), SUM(failed) FROM (
         SELECT date_trunc('hour', created_at, 'UTC') AS h, org_id, COALESCE(key_id, '') AS key_id, COALESCE(model, '') AS model, COALESCE(endpoint, '') AS endpoint,
           -credits AS credits, COALESCE(characters, 0) AS characters, CASE WHEN charge_key LIKE '%/0' THEN 1 ELSE 0 END AS requests, 0 AS failed FROM ledger
         UNION ALL
         SELECT date_trunc('hour', created_at, 'UTC'), org_id, key_id, model, endpoint, 0, 0, 0, 1 FROM request_failures) AS rows
       GROUP BY 1, 2, 3, 4, 5`,
    );
    await client.query('ANALYZE');
    note(`usage summary: PostgreSQL filled with ${ROWS} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return await measure(store);
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => {});
    await client.end();
    await store.close();
  }
}

export async function runUsageSummaryBench(): Promise<{ markdown: string }> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.VOICEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const results: [string, Awaited<ReturnType<typeof measure>>][] = [['SQLite', await sqliteRun()]];
  if (url !== 'off') results.push(['PostgreSQL', await postgresRun(url)]);
  const rows = results.flatMap(([name, list]) => list.map((r) => [name, r.label, r.rows, num(r.p50), num(r.p99), r.p99 <= TARGET_P99_MS ? 'met' : 'missed']));
  return {
    markdown: [
      `### Usage summary: a month of ${ROWS.toLocaleString('en')} ledger rows by day × model (target p99 ≤ ${TARGET_P99_MS} ms)`,
      '',
      markdownTable(['store', 'query', 'rows out', 'p50 ms', 'p99 ms', ''], rows),
    ].join('\n'),
  };
}

if (isMain(import.meta.url)) {
  const { markdown } = await runUsageSummaryBench();
  console.log([machineLine(), '', markdown].join('\n'));
}
