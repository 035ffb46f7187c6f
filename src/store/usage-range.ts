/**
 * @module store/usage-range
 * What both stores' usage summaries share: a range `[from, to)` cut into the
 * whole hours the rollup answers and the partial hours at its edges, which
 * the ledger's and failures' own rows answer; the order of the group fields.
 */
import type { UsageGroup, UsageRow } from './store.js';

const HOUR_MS = 3_600_000;

export interface RangeParts {
  /** Whole hours `[hourFrom, hourTo)` read from the rollup (empty when equal). */
  hourFrom: string;
  hourTo: string;
  /** The two partial stretches read from raw rows, each `[start, end)` (possibly empty). */
  edges: [[string, string], [string, string]];
}

export function splitRange(from: string, to: string): RangeParts {
  const start = Date.parse(from);
  const end = Date.parse(to);
  const firstWhole = Math.ceil(start / HOUR_MS) * HOUR_MS;
  const lastWhole = Math.floor(end / HOUR_MS) * HOUR_MS;
  if (firstWhole < lastWhole) {
    const a = new Date(firstWhole).toISOString();
    const b = new Date(lastWhole).toISOString();
    return { hourFrom: a, hourTo: b, edges: [[from, a], [b, to]] };
  }
  return { hourFrom: from, hourTo: from, edges: [[from, to], [to, to]] };
}

/** The rollup keeps '' where a row has no key, model or endpoint; a summary says null. */
export function groupValue(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A summary row from the columns `g_<group>` and the four sums. */
export function toUsageRow(row: Record<string, unknown>, groupBy: readonly UsageGroup[]): UsageRow {
  const group: UsageRow['group'] = {};
  for (const g of groupBy) group[g] = groupValue(row[`g_${g}`]);
  return {
    group,
    credits: Number(row.credits ?? 0),
    characters: Number(row.characters ?? 0),
    requests: Number(row.requests ?? 0),
    failedRequests: Number(row.failed_requests ?? 0),
  };
}

/** The condition under which a charge row opens a request (not a later batch `<request id>/<n>`, n > 0), as the rollup's triggers count it. */
export const OPENS_REQUEST = "CASE WHEN charge_key IS NULL OR charge_key NOT LIKE '%/%' OR charge_key LIKE '%/0' THEN 1 ELSE 0 END";
