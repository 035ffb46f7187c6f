/**
 * @module store/sqlite/usage
 * Usage in SQLite (`UsageRepository`): what a key spent and the summaries,
 * read from the hourly rollup that the ledger's triggers keep
 * (migrations/0005-key-policies-and-usage-rollup.sql) with the partial hours
 * at a range's edges read from the raw rows; failed requests; the ledger's
 * rows of a range in keyset pages. Ledger rows are written in synchronous
 * transactions that stamp their own time, so a reader in this process never
 * interleaves with one; a reader in another process (the CLI) takes the write
 * lock once (`BEGIN IMMEDIATE; COMMIT`) before it reads, which waits for any
 * write another process has under way.
 */
import type Database from 'better-sqlite3';
import { toEntry, type LedgerRow } from '../ledger-row.js';
import type { UsageGroup, UsageQuery, UsageRepository } from '../store.js';
import { OPENS_REQUEST, splitRange, toUsageRow } from '../usage-range.js';
import { guard, type SqliteContext } from './context.js';

const GROUP_SQL: Record<UsageGroup, string> = {
  day: "substr(h, 1, 10) || 'T00:00:00.000Z'",
  hour: 'h',
  model: 'model',
  endpoint: 'endpoint',
  key: 'key_id',
  org: 'org_id',
};

const HOUR_OF = "substr(created_at, 1, 13) || ':00:00.000Z'";

/** The statement for one shape of query (its groups, and whether it names an organisation). */
function summarySql(groupBy: readonly UsageGroup[], org: boolean): string {
  const byOrg = org ? ' AND org_id = @org' : '';
  const raw = (edge: 1 | 2) =>
    `SELECT ${HOUR_OF} AS h, org_id, COALESCE(key_id, '') AS key_id, COALESCE(model, '') AS model, COALESCE(endpoint, '') AS endpoint,
       -credits AS credits, COALESCE(characters, 0) AS characters, ${OPENS_REQUEST} AS requests, 0 AS failed_requests
     FROM ledger WHERE created_at >= @e${edge}from AND created_at < @e${edge}to AND kind = 'charge'${byOrg}
     UNION ALL
     SELECT ${HOUR_OF}, org_id, COALESCE(key_id, ''), COALESCE(model, ''), COALESCE(endpoint, ''), 0, 0, 0, 1
     FROM request_failures WHERE created_at >= @e${edge}from AND created_at < @e${edge}to${byOrg}`;
  const groups = groupBy.map((g) => `${GROUP_SQL[g]} AS g_${g}`);
  const names = groupBy.map((g) => `g_${g}`);
  return `WITH parts AS (
      SELECT hour AS h, org_id, key_id, model, endpoint, credits, characters, requests, failed_requests
      FROM usage_hourly WHERE hour >= @hourFrom AND hour < @hourTo${byOrg}
      UNION ALL ${raw(1)}
      UNION ALL ${raw(2)}
    )
    SELECT ${[...groups, 'SUM(credits) AS credits', 'SUM(characters) AS characters', 'SUM(requests) AS requests', 'SUM(failed_requests) AS failed_requests'].join(', ')}
    FROM parts${names.length ? ` GROUP BY ${names.join(', ')} ORDER BY ${names.join(', ')}` : ''}`;
}

export function sqliteUsage({ db, durable }: SqliteContext): UsageRepository {
  const s = {
    spent: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM usage_hourly WHERE key_id = ? AND hour >= ?'),
    failure: db.prepare(
      `INSERT INTO request_failures (org_id, key_id, request_id, model, endpoint, code, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (request_id) DO NOTHING`,
    ),
    page: (org: boolean) =>
      db.prepare(
        `SELECT * FROM ledger WHERE created_at >= @from AND created_at < @to${org ? ' AND org_id = @org' : ''}
           AND (created_at > @afterAt OR (created_at = @afterAt AND id > @afterId))
         ORDER BY created_at, id LIMIT @limit`,
      ),
  };
  const pages = { all: s.page(false), org: s.page(true) };
  const summaries = new Map<string, Database.Statement>();
  const summaryStatement = (query: UsageQuery) => {
    const key = `${query.groupBy.join(',')}|${query.orgId !== undefined}`;
    let statement = summaries.get(key);
    if (!statement) summaries.set(key, (statement = db.prepare(summarySql(query.groupBy, query.orgId !== undefined))));
    return statement;
  };
  // Waits for any write transaction another process has under way (this process's are synchronous).
  const writeClock = () =>
    guard(() => {
      db.exec('BEGIN IMMEDIATE');
      db.exec('COMMIT');
    });
  return {
    async spent(keyId, since) {
      return (s.spent.get(keyId, since) as { total: number }).total;
    },
    async recordFailure(f) {
      return durable(() => guard(() => s.failure.run(f.orgId, f.keyId, f.requestId, f.model, f.endpoint, f.code, new Date().toISOString()).changes === 1));
    },
    async summary(query) {
      writeClock();
      const parts = splitRange(query.from, query.to);
      const rows = summaryStatement(query).all({
        hourFrom: parts.hourFrom,
        hourTo: parts.hourTo,
        e1from: parts.edges[0][0],
        e1to: parts.edges[0][1],
        e2from: parts.edges[1][0],
        e2to: parts.edges[1][1],
        ...(query.orgId !== undefined ? { org: query.orgId } : {}),
      }) as Record<string, unknown>[];
      return rows.map((row) => toUsageRow(row, query.groupBy));
    },
    async *entries(query) {
      writeClock();
      const limit = query.pageSize ?? 1000;
      const statement = query.orgId !== undefined ? pages.org : pages.all;
      let afterAt = '';
      let afterId = 0;
      for (;;) {
        const rows = statement.all({ from: query.from, to: query.to, afterAt, afterId, limit, ...(query.orgId !== undefined ? { org: query.orgId } : {}) }) as LedgerRow<string>[];
        for (const row of rows) yield toEntry(row);
        if (rows.length < limit) return;
        afterAt = rows[rows.length - 1].created_at;
        afterId = rows[rows.length - 1].id;
      }
    },
  };
}
