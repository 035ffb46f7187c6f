/**
 * @module store/sqlite/keys
 * API keys in SQLite (`KeyRepository`): only their hashes, with their policies (lists as JSON text).
 */
import type { KeyRepository } from '../store.js';
import { newKeyColumns, policyColumns, toKey, type KeyRow } from '../account-rows.js';
import type { SqliteContext } from './context.js';

const asList = (value: string[] | null) => (value === null ? null : JSON.stringify(value));

export function sqliteKeys({ db, durable }: SqliteContext): KeyRepository {
  const s = {
    keyGet: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
    keyList: db.prepare('SELECT * FROM api_keys WHERE org_id = ? ORDER BY created_at, id'),
    keyRevoke: db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
    keyTouch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
  };
  return {
    async create(key) {
      const columns = newKeyColumns(key, asList);
      const names = Object.keys(columns);
      await durable(() => db.prepare(`INSERT INTO api_keys (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`).run(columns));
      return toKey(s.keyGet.get(key.id) as KeyRow);
    },
    async get(id) {
      const row = s.keyGet.get(id) as KeyRow | undefined;
      return row ? toKey(row) : null;
    },
    async list(orgId) {
      return (s.keyList.all(orgId) as KeyRow[]).map(toKey);
    },
    async update(id, patch) {
      const columns = policyColumns(patch, asList);
      const names = Object.keys(columns);
      if (names.length > 0) {
        const statement = db.prepare(`UPDATE api_keys SET ${names.map((n) => `${n} = @${n}`).join(', ')} WHERE id = @id`);
        await durable(() => statement.run({ ...columns, id }));
      }
      const row = s.keyGet.get(id) as KeyRow | undefined;
      return row ? toKey(row) : null;
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
