/**
 * @module store/postgres/keys
 * API keys in PostgreSQL (`KeyRepository`): only their hashes.
 */
import { toKey, type KeyRow } from '../account-rows.js';
import type { KeyRepository } from '../store.js';
import type { Db } from './db.js';

export function postgresKeys({ query }: Db): KeyRepository {
  return {
    async create(key) {
      const [row] = await query<KeyRow<Date>>(
        'INSERT INTO api_keys (id, org_id, name, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [key.id, key.orgId, key.name, key.secretHash, key.createdAt],
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
    async revoke(id, at) {
      const [row] = await query<KeyRow<Date>>('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *', [id, at]);
      return row ? toKey(row) : null;
    },
    async touch(id, at) {
      await query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
    },
  };
}
