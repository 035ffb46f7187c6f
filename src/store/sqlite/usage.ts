/**
 * @module store/sqlite/usage
 * Usage in SQLite (`UsageRepository`), read from the hourly rollup that the
 * ledger's triggers keep (migrations/0005-key-policies-and-usage-rollup.sql).
 */
import type { UsageRepository } from '../store.js';
import type { SqliteContext } from './context.js';

export function sqliteUsage({ db }: SqliteContext): UsageRepository {
  const s = {
    spent: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM usage_hourly WHERE key_id = ? AND hour >= ?'),
  };
  return {
    async spent(keyId, since) {
      return (s.spent.get(keyId, since) as { total: number }).total;
    },
  };
}
