/**
 * @module store/sqlite/dictionaries
 * Pronunciation dictionaries in SQLite (`DictRepository`): items as JSON text.
 */
import type { DictRepository } from '../store.js';
import { toDict, type DictRow } from '../account-rows.js';
import type { SqliteContext } from './context.js';

export function sqliteDicts({ db, durable }: SqliteContext): DictRepository {
  const s = {
    dictInsert: db.prepare(
      'INSERT INTO pronunciation_dicts (id, org_id, name, items, pinned, created_at, updated_at) VALUES (@id, @org_id, @name, @items, @pinned, @created_at, @created_at)',
    ),
    dictGet: db.prepare('SELECT * FROM pronunciation_dicts WHERE id = ?'),
    dictList: db.prepare('SELECT * FROM pronunciation_dicts WHERE org_id = ? ORDER BY created_at DESC, id DESC'),
    dictUpdate: db.prepare(
      `UPDATE pronunciation_dicts SET name = COALESCE(@name, name), items = COALESCE(@items, items),
       pinned = COALESCE(@pinned, pinned), updated_at = @updated_at WHERE id = @id`,
    ),
    dictDelete: db.prepare('DELETE FROM pronunciation_dicts WHERE id = ?'),
  };
  return {
    async create(dict) {
      await durable(() => s.dictInsert.run({
        id: dict.id,
        org_id: dict.orgId,
        name: dict.name,
        items: JSON.stringify(dict.items),
        pinned: dict.pinned ? 1 : 0,
        created_at: dict.createdAt,
      }));
      return toDict(s.dictGet.get(dict.id) as DictRow);
    },
    async get(id) {
      const row = s.dictGet.get(id) as DictRow | undefined;
      return row ? toDict(row) : null;
    },
    async list(orgId) {
      return (s.dictList.all(orgId) as DictRow[]).map(toDict);
    },
    async update(id, patch) {
      const result = await durable(() => s.dictUpdate.run({
        id,
        name: patch.name ?? null,
        items: patch.items ? JSON.stringify(patch.items) : null,
        pinned: patch.pinned === undefined ? null : patch.pinned ? 1 : 0,
        updated_at: new Date().toISOString(),
      }));
      if (result.changes === 0) return null;
      return toDict(s.dictGet.get(id) as DictRow);
    },
    async delete(id) {
      return (await durable(() => s.dictDelete.run(id))).changes > 0;
    },
  };
}
