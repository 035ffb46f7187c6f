/**
 * @module store/ledger-row
 * A ledger row as both stores' tables name its columns, and the entry it
 * becomes. Only the type of `created_at` differs: ISO text in SQLite, a
 * `Date` from PostgreSQL.
 */
import type { LedgerEntry } from './store.js';

export interface LedgerRow<CreatedAt extends string | Date = string | Date> {
  id: number;
  org_id: string;
  kind: 'charge' | 'credit';
  credits: number;
  key_id: string | null;
  request_id: string | null;
  charge_key: string | null;
  client_request_id: string | null;
  model: string | null;
  endpoint: string | null;
  characters: number | null;
  reason: string | null;
  created_at: CreatedAt;
}

export function toEntry(row: LedgerRow): LedgerEntry {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    credits: row.credits,
    keyId: row.key_id,
    requestId: row.request_id,
    chargeKey: row.charge_key,
    clientRequestId: row.client_request_id,
    model: row.model,
    endpoint: row.endpoint,
    characters: row.characters,
    reason: row.reason,
    createdAt: typeof row.created_at === 'string' ? row.created_at : row.created_at.toISOString(),
  };
}
