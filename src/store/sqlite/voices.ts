/**
 * @module store/sqlite/voices
 * Cloned voices in SQLite (`VoiceRepository`): the voice, its clip (a blob)
 * and its engine profiles (`voice_profiles`).
 */
import type { StoredVoice, VoiceRepository } from '../store.js';
import { toVoice, type VoiceRow } from '../account-rows.js';
import type { SqliteContext } from './context.js';

export function sqliteVoices({ db, durable }: SqliteContext): VoiceRepository {
  const s = {
    voiceInsert: db.prepare(
      `INSERT INTO voices (id, org_id, name, description, gender, language, accent, transcript, clip, clip_seconds, created_at)
       VALUES (@id, @org_id, @name, @description, @gender, @language, @accent, @transcript, @clip, @clip_seconds, @created_at)`,
    ),
    voiceGet: db.prepare('SELECT id, org_id, name, description, gender, language, accent, transcript, clip_seconds, created_at FROM voices WHERE id = ?'),
    voiceList: db.prepare(
      'SELECT id, org_id, name, description, gender, language, accent, transcript, clip_seconds, created_at FROM voices WHERE org_id = ? ORDER BY created_at DESC, id DESC',
    ),
    voiceUpdate: db.prepare(
      `UPDATE voices SET name = COALESCE(@name, name), description = COALESCE(@description, description),
       gender = COALESCE(@gender, gender), accent = CASE WHEN @set_accent THEN @accent ELSE accent END,
       transcript = CASE WHEN @set_transcript THEN @transcript ELSE transcript END WHERE id = @id`,
    ),
    voiceDelete: db.prepare('DELETE FROM voices WHERE id = ?'),
    voiceClip: db.prepare('SELECT clip FROM voices WHERE id = ?'),
    profileUpsert: db.prepare(
      `INSERT INTO voice_profiles (voice_id, engine_type, data, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (voice_id, engine_type) DO UPDATE SET data = excluded.data, created_at = excluded.created_at`,
    ),
    profileList: db.prepare('SELECT engine_type, data FROM voice_profiles WHERE voice_id = ?'),
  };

  const withProfiles = (row: VoiceRow): StoredVoice => {
    const profiles: Record<string, unknown> = {};
    for (const p of s.profileList.all(row.id) as { engine_type: string; data: string }[]) profiles[p.engine_type] = JSON.parse(p.data);
    return toVoice(row, profiles);
  };

  return {
    async create(voice, clip) {
      await durable(() => s.voiceInsert.run({
        id: voice.id,
        org_id: voice.orgId,
        name: voice.name,
        description: voice.description,
        gender: voice.gender,
        language: voice.language,
        accent: voice.accent,
        transcript: voice.transcript,
        clip,
        clip_seconds: voice.clipSeconds,
        created_at: voice.createdAt,
      }));
      return withProfiles(s.voiceGet.get(voice.id) as VoiceRow);
    },
    async get(id) {
      const row = s.voiceGet.get(id) as VoiceRow | undefined;
      return row ? withProfiles(row) : null;
    },
    async list(orgId) {
      return (s.voiceList.all(orgId) as VoiceRow[]).map(withProfiles);
    },
    async update(id, patch) {
      const result = await durable(() => s.voiceUpdate.run({
        id,
        name: patch.name ?? null,
        description: patch.description ?? null,
        gender: patch.gender ?? null,
        set_accent: patch.accent !== undefined ? 1 : 0,
        accent: patch.accent ?? null,
        set_transcript: patch.transcript !== undefined ? 1 : 0,
        transcript: patch.transcript ?? null,
      }));
      if (result.changes === 0) return null;
      return withProfiles(s.voiceGet.get(id) as VoiceRow);
    },
    async delete(id) {
      return durable(
        db.transaction(() => {
          db.prepare('DELETE FROM voice_profiles WHERE voice_id = ?').run(id);
          return s.voiceDelete.run(id).changes > 0;
        }),
      );
    },
    async clip(id) {
      const row = s.voiceClip.get(id) as { clip: Buffer } | undefined;
      return row?.clip ?? null;
    },
    async setProfile(voiceId, engineType, data) {
      await durable(() => s.profileUpsert.run(voiceId, engineType, JSON.stringify(data), new Date().toISOString()));
    },
  };
}
