/**
 * @module store/sqlite/keys
 * API keys in SQLite (`KeyRepository`): only their hashes.
 */
import type { KeyRepository } from '../store.js';
import { toKey, type KeyRow } from '../account-rows.js';
import type { SqliteContext } from './context.js';

export function sqliteKeys({ db, durable }: SqliteContext): KeyRepository {
  const s = {
    keyInsert: db.prepare('INSERT INTO api_keys (id, org_id, name, secret_hash, created_at) VALUES (@id, @org_id, @name, @secret_hash, @created_at)'),
    keyGet: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
    keyList: db.prepare('SELECT * FROM api_keys WHERE org_id = ? ORDER BY created_at, id'),
    keyRevoke: db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
    keyTouch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
  };
  return {
    async create(key) {
      await durable(() => s.keyInsert.run({ id: key.id, org_id: key.orgId, name: key.name, secret_hash: key.secretHash, created_at: key.createdAt }));
      return toKey(s.keyGet.get(key.id) as KeyRow);
    },
    async get(id) {
      const row = s.keyGet.get(id) as KeyRow | undefined;
      return row ? toKey(row) : null;
    },
    async list(orgId) {
      return (s.keyList.all(orgId) as KeyRow[]).map(toKey);
    },
    async revoke(id, at) {
      if ((await durable(() => s.keyRevoke.run(at, id))).changes === 0) return null;
      return toKey(s.keyGet.get(id) as KeyRow);
    },
    // When a key was last used is informational: it reaches the disk with the next flush.
    async touch(id, at) {
      s.keyTouch.run(at, id);
    },
  };
}
