/**
 * @module store/postgres/keys
 * API keys in PostgreSQL (`KeyRepository`): only their hashes, with their policies (lists as `text[]`).
 */
import { newKeyColumns, policyColumns, toKey, type KeyRow } from '../account-rows.js';
import type { KeyRepository } from '../store.js';
import type { Db } from './db.js';

const asList = (value: string[] | null) => value;

export function postgresKeys({ query }: Db): KeyRepository {
  return {
    async create(key) {
      const columns = newKeyColumns(key, asList);
      const names = Object.keys(columns);
      const [row] = await query<KeyRow<Date>>(
        `INSERT INTO api_keys (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`,
        Object.values(columns),
      );
      return toKey(row);
    },
    async get(id) {
      const [row] = await query<KeyRow<Date>>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return row ? toKey(row) : null;
    },
    async list(orgId) {
      return (await query<KeyRow<Date>>('SELECT * FROM api_keys WHERE org_id = $1 ORDER BY created_at, id', [orgId])).map(toKey);
    },
    async update(id, patch) {
      const columns = policyColumns(patch, asList);
      const names = Object.keys(columns);
      const [row] =
        names.length > 0
          ? await query<KeyRow<Date>>(`UPDATE api_keys SET ${names.map((n, i) => `${n} = $${i + 2}`).join(', ')} WHERE id = $1 RETURNING *`, [id, ...Object.values(columns)])
          : await query<KeyRow<Date>>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return row ? toKey(row) : null;
    },
    async revoke(id, at) {
      const [row] = await query<KeyRow<Date>>('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *', [id, at]);
      return row ? toKey(row) : null;
    },
    async touch(id, at) {
      await query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
    },
  };
}
