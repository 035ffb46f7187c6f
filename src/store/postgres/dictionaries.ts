/**
 * @module store/postgres/dictionaries
 * Pronunciation dictionaries in PostgreSQL (`DictRepository`): items as `json`.
 */
import { toDict, type DictRow } from '../account-rows.js';
import type { DictRepository } from '../store.js';
import type { Db } from './db.js';

export function postgresDicts({ query }: Db): DictRepository {
  return {
    async create(dict) {
      const [row] = await query<DictRow<Date>>(
        'INSERT INTO pronunciation_dicts (id, org_id, name, items, pinned, created_at, updated_at) VALUES ($1, $2, $3, $4::json, $5, $6, $6) RETURNING *',
        [dict.id, dict.orgId, dict.name, JSON.stringify(dict.items), dict.pinned, dict.createdAt],
      );
      return toDict(row);
    },
    async get(id) {
      const [row] = await query<DictRow<Date>>('SELECT * FROM pronunciation_dicts WHERE id = $1', [id]);
      return row ? toDict(row) : null;
    },
    async list(orgId) {
      return (await query<DictRow<Date>>('SELECT * FROM pronunciation_dicts WHERE org_id = $1 ORDER BY created_at DESC, id DESC', [orgId])).map(toDict);
    },
    async update(id, patch) {
      const [row] = await query<DictRow<Date>>(
        `UPDATE pronunciation_dicts SET name = COALESCE($2, name), items = COALESCE($3::json, items), pinned = COALESCE($4, pinned), updated_at = $5
         WHERE id = $1 RETURNING *`,
        [id, patch.name ?? null, patch.items ? JSON.stringify(patch.items) : null, patch.pinned ?? null, new Date().toISOString()],
      );
      return row ? toDict(row) : null;
    },
    async delete(id) {
      return (await query('DELETE FROM pronunciation_dicts WHERE id = $1 RETURNING id', [id])).length > 0;
    },
  };
}
