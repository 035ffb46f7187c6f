/**
 * @module store/postgres/voices
 * Cloned voices in PostgreSQL (`VoiceRepository`): the voice, its clip
 * (`bytea`) and its engine profiles (`voice_profiles`, gathered by the query).
 */
import { toVoice, type VoiceRow } from '../account-rows.js';
import type { StoredVoice, VoiceRepository } from '../store.js';
import type { Db } from './db.js';

/** A voice row with its engine profiles gathered by the query (`VOICE_COLUMNS`). */
type VoiceWithProfiles = VoiceRow<Date> & { profiles: Record<string, unknown> };

const toVoiceWithProfiles = (row: VoiceWithProfiles): StoredVoice => toVoice(row, row.profiles);

const VOICE_COLUMNS = `v.id, v.org_id, v.name, v.description, v.gender, v.language, v.accent, v.transcript, v.clip_seconds, v.created_at,
  COALESCE((SELECT json_object_agg(p.engine_type, p.data) FROM voice_profiles p WHERE p.voice_id = v.id), '{}'::json) AS profiles`;

export function postgresVoices({ query }: Db): VoiceRepository {
  const getVoice = async (id: string): Promise<StoredVoice | null> => {
    const [row] = await query<VoiceWithProfiles>(`SELECT ${VOICE_COLUMNS} FROM voices v WHERE v.id = $1`, [id]);
    return row ? toVoiceWithProfiles(row) : null;
  };

  return {
    async create(voice, clip) {
      await query(
        `INSERT INTO voices (id, org_id, name, description, gender, language, accent, transcript, clip, clip_seconds, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [voice.id, voice.orgId, voice.name, voice.description, voice.gender, voice.language, voice.accent, voice.transcript, clip, voice.clipSeconds, voice.createdAt],
      );
      return (await getVoice(voice.id))!;
    },
    get: getVoice,
    async list(orgId) {
      return (await query<VoiceWithProfiles>(`SELECT ${VOICE_COLUMNS} FROM voices v WHERE v.org_id = $1 ORDER BY v.created_at DESC, v.id DESC`, [orgId])).map(toVoiceWithProfiles);
    },
    async update(id, patch) {
      const [row] = await query<{ id: string }>(
        `UPDATE voices SET name = COALESCE($2, name), description = COALESCE($3, description), gender = COALESCE($4, gender),
         accent = CASE WHEN $5::boolean THEN $6 ELSE accent END, transcript = CASE WHEN $7::boolean THEN $8 ELSE transcript END
         WHERE id = $1 RETURNING id`,
        [id, patch.name ?? null, patch.description ?? null, patch.gender ?? null, patch.accent !== undefined, patch.accent ?? null, patch.transcript !== undefined, patch.transcript ?? null],
      );
      return row ? getVoice(id) : null;
    },
    async delete(id) {
      return (await query('DELETE FROM voices WHERE id = $1 RETURNING id', [id])).length > 0;
    },
    async clip(id) {
      const [row] = await query<{ clip: Buffer }>('SELECT clip FROM voices WHERE id = $1', [id]);
      return row?.clip ?? null;
    },
    async setProfile(voiceId, engineType, data) {
      await query(
        `INSERT INTO voice_profiles (voice_id, engine_type, data) VALUES ($1, $2, $3::json)
         ON CONFLICT (voice_id, engine_type) DO UPDATE SET data = excluded.data, created_at = now()`,
        [voiceId, engineType, JSON.stringify(data)],
      );
    },
  };
}
