/**
 * @module accounts/usage-reports
 * Usage summaries and the ledger's export, with their input rules, shared by
 * the HTTP API (`/usage/summary`, `/admin/usage/summary`,
 * `/admin/usage/export`) and the CLI (`voicegate usage summary|export`), so
 * both read ranges, groupings and formats alike and print the same lines.
 * Ranges are half-open `[from, to)` in UTC; the store reads them after its
 * write clock, so a range that ends in the past never changes afterwards.
 * Signs: `credits` and `usd` of an exported row are the ledger's own (negative
 * for a charge, positive for credits added); a summary's are what was charged
 * (positive).
 */
import { ApiError } from '../errors/api-error.js';
import { USAGE_GROUPS, type LedgerEntry, type Store, type UsageGroup, type UsageRow } from '../store/store.js';
import { usd, type PricingConfig } from './pricing.js';

export type ExportFormat = 'csv' | 'jsonl';

export interface UsageRangeInput {
  from?: unknown;
  to?: unknown;
}

export interface ReportRange {
  from: string;
  to: string;
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

// A date (midnight UTC), or a date and time with a zone (Z or ±hh:mm); fractions beyond milliseconds are cut.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/;

function instant(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !ISO_8601.test(value)) {
    throw invalid(`${name} must be an ISO 8601 date (2026-12-01) or time with a zone (2026-12-01T08:30:00Z), got ${JSON.stringify(value)}`);
  }
  const normalised = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/\.(\d{3})\d+/, '.$1');
  const ms = Date.parse(normalised);
  if (Number.isNaN(ms) || ms < 0 || ms >= Date.UTC(10000, 0, 1)) throw invalid(`${name} is not a valid time from 1970 to 9999: ${JSON.stringify(value)}`);
  return ms;
}

/** `[from, to)`: `to` defaults to now, `from` to the start of the UTC month `to` falls in (its last moment's). */
export function parseRange(input: UsageRangeInput, now = Date.now()): ReportRange {
  const to = instant(single(input.to, 'to'), 'to') ?? now;
  const last = new Date(to - 1);
  const from = instant(single(input.from, 'from'), 'from') ?? Date.UTC(last.getUTCFullYear(), last.getUTCMonth(), 1);
  if (from >= to) throw invalid(`from must be before to (the range is [from, to)): from ${new Date(from).toISOString()}, to ${new Date(to).toISOString()}`);
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

function single(value: unknown, name: string): unknown {
  if (Array.isArray(value)) throw invalid(`${name} may be given once`);
  return value;
}

/** `group_by`, comma-separated and/or repeated; each name once, in the order first given. */
export function parseGroupBy(value: unknown): UsageGroup[] {
  if (value === undefined) return [];
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
  const groups: UsageGroup[] = [];
  for (const part of parts) {
    const name = typeof part === 'string' ? part.trim() : part;
    if (name === '') continue;
    if (typeof name !== 'string' || !(USAGE_GROUPS as readonly string[]).includes(name)) {
      throw invalid(`group_by takes ${USAGE_GROUPS.join(', ')} (comma-separated or repeated), got ${JSON.stringify(name)}`);
    }
    if (!groups.includes(name as UsageGroup)) groups.push(name as UsageGroup);
  }
  return groups;
}

export function parseFormat(value: unknown): ExportFormat {
  if (value === undefined) return 'csv';
  if (value === 'csv' || value === 'jsonl') return value;
  throw invalid(`format must be csv or jsonl, got ${JSON.stringify(value)}`);
}

function orgFilter(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw invalid('org must be an organisation id, given once');
  return value;
}

/** A summary row as the API and the CLI print it: each group field, then the sums. */
export function summaryRowView(row: UsageRow, pricing: PricingConfig) {
  return { ...row.group, credits: row.credits, characters: row.characters, usd: usd(row.credits, pricing), requests: row.requests, failed_requests: row.failedRequests };
}

/** The columns of an exported row, in the CSV's order (JSONL uses the same names). */
export const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'org_id',
  'key_id',
  'kind',
  'endpoint',
  'model',
  'characters',
  'credits',
  'usd',
  'request_id',
  'charge_key',
  'client_request_id',
  'reason',
] as const;

export function exportRecord(entry: LedgerEntry, pricing: PricingConfig): Record<(typeof EXPORT_COLUMNS)[number], string | number | null> {
  return {
    id: String(entry.id),
    created_at: entry.createdAt,
    org_id: entry.orgId,
    key_id: entry.keyId,
    kind: entry.kind,
    endpoint: entry.endpoint,
    model: entry.model,
    characters: entry.characters,
    credits: entry.credits,
    usd: usd(entry.credits, pricing),
    request_id: entry.requestId,
    charge_key: entry.chargeKey,
    client_request_id: entry.clientRequestId,
    reason: entry.reason,
  };
}

/** RFC 4180: a field with a comma, quote, CR or LF is quoted, its quotes doubled; null is empty. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const CSV_HEADER = `${EXPORT_COLUMNS.join(',')}\r\n`;

export function csvLine(entry: LedgerEntry, pricing: PricingConfig): string {
  const record = exportRecord(entry, pricing);
  return `${EXPORT_COLUMNS.map((c) => csvField(record[c])).join(',')}\r\n`;
}

export function jsonLine(entry: LedgerEntry, pricing: PricingConfig): string {
  return `${JSON.stringify(exportRecord(entry, pricing))}\n`;
}

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson' };

/** `voicegate-usage-20261101T000000Z-20261201T000000Z[-org_x].csv` */
export function exportFilename(range: ReportRange & { orgId?: string }, format: ExportFormat): string {
  const compact = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.000Z$/, 'Z');
  const org = range.orgId ? `-${range.orgId.replace(/[^A-Za-z0-9_-]/g, '_')}` : '';
  return `voicegate-usage-${compact(range.from)}-${compact(range.to)}${org}.${format}`;
}

export interface SummaryInput extends UsageRangeInput {
  group_by?: unknown;
  org?: unknown;
}

export interface ExportInput extends UsageRangeInput {
  format?: unknown;
  org?: unknown;
}

/** Reads and answers usage reports over a store. `orgId`: the caller's own organisation (a key), which no input can widen. */
export class UsageReports {
  constructor(
    private readonly store: Store,
    private readonly pricing: PricingConfig,
  ) {}

  private async org(input: { org?: unknown }, own: string | undefined): Promise<string | undefined> {
    if (own !== undefined) {
      if (input.org !== undefined && input.org !== own) throw invalid('org is for the admin API; an API key reads its own organisation');
      return own;
    }
    const orgId = orgFilter(input.org);
    if (orgId !== undefined && !(await this.store.orgs.get(orgId))) throw new ApiError('org_not_found', { id: orgId });
    return orgId;
  }

  async summary(input: SummaryInput, own?: string) {
    const range = parseRange(input);
    const groupBy = parseGroupBy(input.group_by);
    const orgId = await this.org(input, own);
    const rows = await this.store.usage.summary({ ...range, groupBy, ...(orgId !== undefined ? { orgId } : {}) });
    return { data: rows.map((row) => summaryRowView(row, this.pricing)), group_by: groupBy, from: range.from, to: range.to };
  }

  /**
   * The export's checked request and its text in chunks of about 64 KiB (the header line first for
   * CSV), read from the store page by page as the consumer pulls: memory stays flat whatever the range.
   */
  async export(input: ExportInput): Promise<{ range: ReportRange & { orgId?: string }; format: ExportFormat; filename: string; chunks: AsyncIterable<string> }> {
    const range = parseRange(input);
    const format = parseFormat(input.format);
    const orgId = await this.org(input, undefined);
    const full = { ...range, ...(orgId !== undefined ? { orgId } : {}) };
    const entries = this.store.usage.entries(full);
    const pricing = this.pricing;
    async function* chunks(): AsyncGenerator<string> {
      let buffer = format === 'csv' ? CSV_HEADER : '';
      for await (const entry of entries) {
        buffer += format === 'csv' ? csvLine(entry, pricing) : jsonLine(entry, pricing);
        if (buffer.length >= 65_536) {
          yield buffer;
          buffer = '';
        }
      }
      if (buffer) yield buffer;
    }
    return { range: full, format, filename: exportFilename(full, format), chunks: chunks() };
  }
}
