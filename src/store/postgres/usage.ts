/**
 * @module store/postgres/usage
 * Usage in PostgreSQL (`UsageRepository`): what a key spent and the
 * summaries, read from the hourly rollup that the ledger's triggers keep
 * (migrations/0006-key-policies-and-usage-rollup.sql) with the partial hours
 * at a range's edges read from the raw rows; failed requests; the ledger's
 * rows of a range in keyset pages. Every reader first takes the write clock
 * exclusively in a transaction of its own (every ledger and failure row takes
 * it shared before it stamps its time): that waits for each write under way,
 * and any later write carries a later time, so a range that ends in the past
 * never gains a row afterwards.
 */
import { toEntry, type LedgerRow } from '../ledger-row.js';
import type { UsageGroup, UsageQuery, UsageRepository } from '../store.js';
import { OPENS_REQUEST, splitRange, toUsageRow } from '../usage-range.js';
import type { Db } from './db.js';

/** The advisory lock the migration's `usage_write_clock()` takes shared. */
export const WRITE_CLOCK_LOCK = 7406211001;

const GROUP_SQL: Record<UsageGroup, string> = {
  day: "date_trunc('day', h, 'UTC')",
  hour: 'h',
  model: 'model',
  endpoint: 'endpoint',
  key: 'key_id',
  org: 'org_id',
};

/** Parameters: $1 hourFrom, $2 hourTo, $3–$6 the edges, $7 the organisation (when named). */
function summarySql(groupBy: readonly UsageGroup[], org: boolean): string {
  const byOrg = org ? ' AND org_id = $7' : '';
  const raw = (from: string, to: string) =>
    `SELECT date_trunc('hour', created_at, 'UTC') AS h, org_id, COALESCE(key_id, '') AS key_id, COALESCE(model, '') AS model, COALESCE(endpoint, '') AS endpoint,
       -credits AS credits, COALESCE(characters, 0)::bigint AS characters, ${OPENS_REQUEST}::bigint AS requests, 0::bigint AS failed_requests
     FROM ledger WHERE created_at >= ${from} AND created_at < ${to} AND kind = 'charge'${byOrg}
     UNION ALL
     SELECT date_trunc('hour', created_at, 'UTC'), org_id, COALESCE(key_id, ''), COALESCE(model, ''), COALESCE(endpoint, ''), 0, 0, 0, 1
     FROM request_failures WHERE created_at >= ${from} AND created_at < ${to}${byOrg}`;
  const groups = groupBy.map((g) => `${GROUP_SQL[g]} AS g_${g}`);
  const names = groupBy.map((g) => `g_${g}`);
  return `WITH parts AS (
      SELECT hour AS h, org_id, key_id, model, endpoint, credits, characters, requests, failed_requests
      FROM usage_hourly WHERE hour >= $1 AND hour < $2${byOrg}
      UNION ALL ${raw('$3', '$4')}
      UNION ALL ${raw('$5', '$6')}
    )
    SELECT ${[...groups, 'SUM(credits)::bigint AS credits', 'SUM(characters)::bigint AS characters', 'SUM(requests)::bigint AS requests', 'SUM(failed_requests)::bigint AS failed_requests'].join(', ')}
    FROM parts${names.length ? ` GROUP BY ${names.join(', ')} ORDER BY ${names.join(', ')}` : ''}`;
}

/** The row's time to the microsecond, as the keyset cursor (a `Date` keeps only milliseconds). */
const PAGE_COLUMNS = `*, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`;

export function postgresUsage({ query, tx }: Db): UsageRepository {
  const writeClock = () => tx((run) => run('SELECT pg_advisory_xact_lock($1)', [WRITE_CLOCK_LOCK]));
  return {
    async spent(keyId, since) {
      const [row] = await query<{ total: string }>('SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM usage_hourly WHERE key_id = $1 AND hour >= $2', [keyId, since]);
      return Number(row.total);
    },
    async recordFailure(f) {
      const rows = await query(
        `INSERT INTO request_failures (org_id, key_id, request_id, model, endpoint, code) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (request_id) DO NOTHING RETURNING id`,
        [f.orgId, f.keyId, f.requestId, f.model, f.endpoint, f.code],
      );
      return rows.length === 1;
    },
    async summary(q: UsageQuery) {
      await writeClock();
      const parts = splitRange(q.from, q.to);
      const params: unknown[] = [parts.hourFrom, parts.hourTo, ...parts.edges.flat()];
      if (q.orgId !== undefined) params.push(q.orgId);
      const rows = await query<Record<string, unknown>>(summarySql(q.groupBy, q.orgId !== undefined), params);
      return rows.map((row) => toUsageRow(row, q.groupBy));
    },
    async *entries(q) {
      await writeClock();
      const limit = q.pageSize ?? 1000;
      const byOrg = q.orgId !== undefined ? ' AND org_id = $6' : '';
      let afterAt: string | null = null;
      let afterId = 0;
      for (;;) {
        const params: unknown[] = [q.from, q.to, afterAt ?? q.from, afterId, limit];
        if (q.orgId !== undefined) params.push(q.orgId);
        const rows = await query<LedgerRow<Date> & { cursor_at: string }>(
          `SELECT ${PAGE_COLUMNS} FROM ledger
           WHERE created_at >= $1 AND created_at < $2 AND (created_at, id) > ($3::timestamptz, $4)${byOrg}
           ORDER BY created_at, id LIMIT $5`,
          params,
        );
        for (const row of rows) {
          const { cursor_at: _cursor, ...ledgerRow } = row;
          yield toEntry(ledgerRow);
        }
        if (rows.length < limit) return;
        afterAt = rows[rows.length - 1].cursor_at;
        afterId = rows[rows.length - 1].id;
      }
    },
  };
}
