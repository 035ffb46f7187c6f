/**
 * @module store/postgres/postgres-store
 * The scale-out store: the same `Store` contract as SQLite on PostgreSQL, so
 * several servers can share one set of accounts, voices and dictionaries.
 * Every balance change and every reservation decided in the database first
 * locks its organisation's row (`SELECT … FOR UPDATE`), so the reserve rule
 * (balance − open holds > 0) and charge-key idempotency hold however many
 * servers race, and all writers take locks in the same order (organisation
 * first), so they cannot deadlock. Each server holds its reservations in
 * memory, backed by one share row per organisation that every server counts
 * (../shares.ts): most are granted from the share's spare with no round trip.
 * Its holds and its share's expiry come from its own clock, and rows lapse by
 * the database's; the share outlives its holds by a quarter of their time, so
 * only clocks minutes apart would matter. Cloned-voice clips are stored in
 * the database (`bytea`). The job queue is jobs.ts.
 */
import { randomBytes } from 'node:crypto';
import { checkReserveRequest } from '../checks.js';
import type {
  AppendResult,
  DictRepository,
  KeyRepository,
  LedgerRepository,
  NewLedgerEntry,
  OrgRepository,
  ReserveResult,
  Store,
  StoredVoice,
  VoiceRepository,
} from '../store.js';
import { openDb, type PostgresOptions, type Run } from './db.js';
import { OrgGroupCommit } from './group-commit.js';
import { postgresJobs } from './jobs.js';
import { toEntry } from '../ledger-row.js';
import { ledgerBatchWriter, type LedgerRow, type LedgerWrite } from './ledger-batch.js';
import { ShareBook } from '../shares.js';
import { migrate } from './migrate.js';
import { limitValues, toDict, toKey, toOrg, toVoice, type DictRow, type KeyRow, type OrgRow, type VoiceRow } from '../account-rows.js';

/** A voice row with its engine profiles gathered by the query (`VOICE_COLUMNS`). */
type VoiceWithProfiles = VoiceRow<Date> & { profiles: Record<string, unknown> };

const toVoiceWithProfiles = (row: VoiceWithProfiles): StoredVoice => toVoice(row, row.profiles);

/** The database clock in epoch milliseconds, the time base of reservations. */
const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

const VOICE_COLUMNS = `v.id, v.org_id, v.name, v.description, v.gender, v.language, v.accent, v.transcript, v.clip_seconds, v.created_at,
  COALESCE((SELECT json_object_agg(p.engine_type, p.data) FROM voice_profiles p WHERE p.voice_id = v.id), '{}'::json) AS profiles`;

/** Locks the organisation's row for the rest of the transaction; null when it does not exist. */
async function lockOrg(run: Run, orgId: string): Promise<number | null> {
  const [row] = await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1 FOR UPDATE', [orgId]);
  return row ? row.balance : null;
}

/** Inside a transaction holding the organisation's lock: the row and its balance change, or the existing row. */
async function appendLocked(run: Run, entry: NewLedgerEntry): Promise<AppendResult> {
  const [inserted] = await run<LedgerRow>(
    `INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (charge_key) DO NOTHING RETURNING *`,
    [entry.orgId, entry.kind, entry.credits, entry.keyId, entry.requestId, entry.chargeKey, entry.clientRequestId, entry.model, entry.endpoint, entry.characters, entry.reason],
  );
  if (inserted) {
    const [org] = await run<{ balance: number }>('UPDATE orgs SET balance = balance + $1 WHERE id = $2 RETURNING balance', [entry.credits, entry.orgId]);
    return { entry: toEntry(inserted), balance: org.balance, duplicate: false };
  }
  const [existing] = await run<LedgerRow>('SELECT * FROM ledger WHERE charge_key = $1', [entry.chargeKey]);
  const [org] = await run<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1', [existing.org_id]);
  return { entry: toEntry(existing), balance: org.balance, duplicate: true };
}

export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  await migrate(options);
  const db = openDb(options);
  const { query } = db;

  const orgs: OrgRepository = {
    async create(org) {
      const [row] = await query<OrgRow<Date>>(
        'INSERT INTO orgs (id, name, max_concurrent, rate_requests, rate_per_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [org.id, org.name, ...limitValues(org.limits)],
      );
      return toOrg(row);
    },
    async get(id) {
      const [row] = await query<OrgRow<Date>>('SELECT * FROM orgs WHERE id = $1', [id]);
      return row ? toOrg(row) : null;
    },
    async list() {
      return (await query<OrgRow<Date>>('SELECT * FROM orgs ORDER BY created_at, id')).map(toOrg);
    },
    async setLimits(id, limits) {
      const [row] = await query<OrgRow<Date>>(
        'UPDATE orgs SET max_concurrent = $2, rate_requests = $3, rate_per_seconds = $4 WHERE id = $1 RETURNING *',
        [id, ...limitValues(limits)],
      );
      return row ? toOrg(row) : null;
    },
    async count() {
      const [row] = await query<{ n: number }>('SELECT COUNT(*) AS n FROM orgs');
      return row.n;
    },
    async createFirst(org) {
      // Under READ COMMITTED two transactions could both see no row; a transaction lock keyed by the schema serialises them.
      return db.tx(async (run) => {
        await run("SELECT pg_advisory_xact_lock(hashtext('voicegate.first-org.' || current_schema()))");
        const [existing] = await run('SELECT 1 FROM orgs LIMIT 1');
        if (existing) return null;
        const [row] = await run<OrgRow<Date>>(
          'INSERT INTO orgs (id, name, max_concurrent, rate_requests, rate_per_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING *',
          [org.id, org.name, ...limitValues(org.limits)],
        );
        return toOrg(row);
      });
    },
  };

  const keys: KeyRepository = {
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

  // This server's reservations: in memory, backed by one share row per organisation (../shares.ts).
  const book = new ShareBook(`share_${randomBytes(8).toString('hex')}`);
  // One organisation's queued settlements, decisions and shrinks share one statement, a call of ledger_write_batch_v4
  // (group-commit.ts, ledger-batch.ts).
  const shrink = (orgId: string) => {
    group.run(orgId, { kind: 'shrink' }).catch(() => {
      // The row stays larger than the holds until the next write of the organisation: it only counts more.
    });
  };
  const group: OrgGroupCommit<LedgerWrite> = new OrgGroupCommit<LedgerWrite>(db, ledgerBatchWriter(book, shrink));
  /** Reservations on their way to the database, so a repeated id waits for the first instead of holding twice. */
  const deciding = new Map<string, Promise<ReserveResult>>();
  const ledger: LedgerRepository = {
    append(entry) {
      return db.tx(async (run) => {
        if ((await lockOrg(run, entry.orgId)) === null) throw new Error(`organization ${entry.orgId} does not exist`);
        return appendLocked(run, entry);
      });
    },
    async reserve(request) {
      checkReserveRequest(request);
      // Most holds fit into the share's spare: no round trip.
      const local = book.grantFromSpare(request, Date.now());
      if (local) return local;
      const pending = deciding.get(request.id);
      if (pending) {
        const first = await pending;
        return first.ok && first.reservation.orgId !== request.orgId ? Promise.reject(new Error(`reservation ${request.id} belongs to another organization`)) : first;
      }
      const decision = group.run<ReserveResult>(request.orgId, { kind: 'reserve', request });
      deciding.set(request.id, decision);
      try {
        return await decision;
      } finally {
        deciding.delete(request.id);
      }
    },
    settle(reservationId, entry) {
      return group.run<AppendResult>(entry.orgId, { kind: 'settle', reservationId, entry });
    },
    async release(reservationId) {
      const hold = book.hold(reservationId);
      if (!hold) {
        // Not this server's: a row of its own, made by a server from before shares.
        await query('DELETE FROM reservations WHERE id = $1', [reservationId]);
        return;
      }
      // The credits become the share's spare; a share left with too much gives it back in a write of its own.
      if (book.release(reservationId)) await group.run(hold.orgId, { kind: 'shrink' });
    },
    async reserved(orgId) {
      const [row] = await query<{ total: number }>(
        `SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM reservations WHERE org_id = $1 AND expires_at > ${NOW_MS} AND id <> $2`,
        [orgId, book.rowId(orgId)],
      );
      return row.total + book.open(orgId, Date.now());
    },
    async list(orgId, pageQuery) {
      const before = pageQuery.startingAfter === undefined ? Number.MAX_SAFE_INTEGER : Number(pageQuery.startingAfter);
      const rows = await query<LedgerRow>('SELECT * FROM ledger WHERE org_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3', [
        orgId,
        Number.isFinite(before) ? Math.trunc(before) : 0,
        pageQuery.limit + 1,
      ]);
      return { data: rows.slice(0, pageQuery.limit).map(toEntry), hasMore: rows.length > pageQuery.limit };
    },
    async sum(orgId) {
      const [row] = await query<{ total: number }>('SELECT COALESCE(SUM(credits), 0)::bigint AS total FROM ledger WHERE org_id = $1', [orgId]);
      return row.total;
    },
    async charged(orgId) {
      const [row] = await query<{ credits: string | number; characters: string | number }>(
        "SELECT COALESCE(-SUM(credits), 0)::bigint AS credits, COALESCE(SUM(characters), 0)::bigint AS characters FROM ledger WHERE org_id = $1 AND kind = 'charge'",
        [orgId],
      );
      return { credits: Number(row.credits), characters: Number(row.characters) };
    },
  };

  const getVoice = async (id: string): Promise<StoredVoice | null> => {
    const [row] = await query<VoiceWithProfiles>(`SELECT ${VOICE_COLUMNS} FROM voices v WHERE v.id = $1`, [id]);
    return row ? toVoiceWithProfiles(row) : null;
  };

  const voices: VoiceRepository = {
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

  const dicts: DictRepository = {
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

  async function close(): Promise<void> {
    // Other servers need not wait for this one's shares to lapse.
    const rows = book.rows().map((share) => share.rowId);
    if (rows.length > 0) await query('DELETE FROM reservations WHERE id = ANY($1)', [rows]).catch(() => {});
    await db.end();
  }

  // The job queue (jobs.ts): one statement per operation.
  const jobs = postgresJobs(query);

  return { orgs, keys, ledger, voices, dicts, jobs, close };
}
