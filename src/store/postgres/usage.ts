/**
 * @module store/postgres/usage
 * Usage in PostgreSQL (`UsageRepository`), read from the hourly rollup that
 * the ledger's triggers keep (migrations/0006-key-policies-and-usage-rollup.sql).
 */
import type { UsageRepository } from '../store.js';
import type { Db } from './db.js';

export function postgresUsage({ query }: Db): UsageRepository {
  return {
    async spent(keyId, since) {
      const [row] = await query<{ total: string }>('SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM usage_hourly WHERE key_id = $1 AND hour >= $2', [keyId, since]);
      return Number(row.total);
    },
  };
}
