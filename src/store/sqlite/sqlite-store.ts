/**
 * @module store/sqlite/sqlite-store
 * The embedded store: SQLite through better-sqlite3 in WAL mode, so the CLI
 * can work on the same file while the server runs. Statements are prepared
 * once; a ledger append is one transaction (insert row, update balance), and
 * every write transaction takes the write lock at its start (`BEGIN
 * IMMEDIATE`), so a reservation's check and insert see no other writer
 * between them, whichever process it is in. Reservations are held in this
 * process's memory, backed by one row per organisation that every process
 * counts (shares.ts): most are granted from that row's spare with no write.
 * Charges, and the reservations the spare cannot grant, share group commits
 * (group-commit.ts) of the ledger's write transactions (ledger-writes.ts).
 * Commits do not wait for the disk on the event loop: a write that must
 * survive a power cut is reported done after a shared flush of the WAL on
 * libuv's thread pool (wal-sync.ts); reservations, key use and dropped holds
 * are not worth a flush of their own. The job queue's writes (jobs.ts) are
 * reported after a flush too, but for lease renewals.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { checkReserveRequest } from '../checks.js';
import { storeUnavailable } from '../errors.js';
import type {
  AppendResult,
  DictRepository,
  StoredVoice,
  VoiceRepository,
  KeyRepository,
  LedgerEntry,
  LedgerRepository,
  OrgLimits,
  OrgRepository,
  Page,
  PageQuery,
  ReserveResult,
  Store,
} from '../store.js';
import { GroupCommit } from './group-commit.js';
import { WalSync, type Flush } from './wal-sync.js';
import { toEntry } from '../ledger-row.js';
import { sqliteJobs } from './jobs.js';
import { prepareLedgerWrites, type LedgerOp, type LedgerRow } from './ledger-writes.js';
import { MIGRATIONS } from './migrations.js';
import { ShareBook } from '../shares.js';
import { limitValues, toDict, toKey, toOrg, toVoice, type DictRow, type KeyRow, type OrgRow, type VoiceRow } from '../account-rows.js';

/** An organisation's limits as named parameters of its statements. */
function limitColumns(limits: OrgLimits) {
  const [max_concurrent, rate_requests, rate_per_seconds] = limitValues(limits);
  return { max_concurrent, rate_requests, rate_per_seconds };
}

/** A database still locked by another process after `busy_timeout` is a 503 `store_unavailable`. */
function classifyWriteError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'))) return storeUnavailable(err);
  return err;
}

function guard<T>(write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw classifyWriteError(err);
  }
}

export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}

export interface SqliteStoreOptions {
  /** How long a write waits for another process's lock. */
  busyTimeoutMs?: number;
  /** How the WAL reaches the disk, on the thread pool, for every flush (tests hold or fail it); by default store/sqlite/wal-sync decides. */
  flush?: Flush;
}

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? 5000);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  const wal = db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('synchronous = FULL'); // a migration is rare: it may wait for the disk
  migrate(db);
  // From here each commit reaches the OS at once and the disk through `walSync`.
  db.pragma('synchronous = NORMAL');
  const walSync = new WalSync(wal ? `${resolve(path)}-wal` : null, options.flush ? { flush: options.flush } : {});
  const flushed = (): Promise<void> => walSync.sync().catch((err) => Promise.reject(storeUnavailable(err)));
  /** Runs a write, and reports it once it is on disk. */
  const durable = async <T>(write: () => T): Promise<T> => {
    const result = write();
    await flushed();
    return result;
  };

  const s = {
    orgInsert: db.prepare(
      'INSERT INTO orgs (id, name, created_at, balance, max_concurrent, rate_requests, rate_per_seconds) VALUES (@id, @name, @created_at, 0, @max_concurrent, @rate_requests, @rate_per_seconds)',
    ),
    // One statement, so the check and the insert are one atomic write under SQLite's lock.
    orgInsertFirst: db.prepare(
      'INSERT INTO orgs (id, name, created_at, balance, max_concurrent, rate_requests, rate_per_seconds) SELECT @id, @name, @created_at, 0, @max_concurrent, @rate_requests, @rate_per_seconds WHERE NOT EXISTS (SELECT 1 FROM orgs)',
    ),
    orgGet: db.prepare('SELECT * FROM orgs WHERE id = ?'),
    orgList: db.prepare('SELECT * FROM orgs ORDER BY created_at, id'),
    orgCount: db.prepare('SELECT COUNT(*) AS n FROM orgs'),
    orgLimits: db.prepare('UPDATE orgs SET max_concurrent = @max_concurrent, rate_requests = @rate_requests, rate_per_seconds = @rate_per_seconds WHERE id = @id'),
    keyInsert: db.prepare('INSERT INTO api_keys (id, org_id, name, secret_hash, created_at) VALUES (@id, @org_id, @name, @secret_hash, @created_at)'),
    keyGet: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
    keyList: db.prepare('SELECT * FROM api_keys WHERE org_id = ? ORDER BY created_at, id'),
    keyRevoke: db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
    keyTouch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    reservationDelete: db.prepare('DELETE FROM reservations WHERE id = ?'),
    ledgerPage: db.prepare('SELECT * FROM ledger WHERE org_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    ledgerSum: db.prepare('SELECT COALESCE(SUM(credits), 0) AS total FROM ledger WHERE org_id = ?'),
    ledgerCharged: db.prepare("SELECT COALESCE(-SUM(credits), 0) AS credits, COALESCE(SUM(characters), 0) AS characters FROM ledger WHERE org_id = ? AND kind = 'charge'"),
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

  const withProfiles = (row: VoiceRow): StoredVoice => {
    const profiles: Record<string, unknown> = {};
    for (const p of s.profileList.all(row.id) as { engine_type: string; data: string }[]) profiles[p.engine_type] = JSON.parse(p.data);
    return toVoice(row, profiles);
  };

  // This process's reservations: in memory, backed by one row per organisation (shares.ts).
  const book = new ShareBook(`share_${randomBytes(8).toString('hex')}`);
  const writes = prepareLedgerWrites(db, book);

  const orgs: OrgRepository = {
    async create(org) {
      await durable(() => s.orgInsert.run({ id: org.id, name: org.name, created_at: new Date().toISOString(), ...limitColumns(org.limits) }));
      return toOrg(s.orgGet.get(org.id) as OrgRow);
    },
    async get(id) {
      const row = s.orgGet.get(id) as OrgRow | undefined;
      return row ? toOrg(row) : null;
    },
    async list() {
      return (s.orgList.all() as OrgRow[]).map(toOrg);
    },
    async setLimits(id, limits) {
      const result = await durable(() => s.orgLimits.run({ id, ...limitColumns(limits) }));
      if (result.changes === 0) return null;
      return toOrg(s.orgGet.get(id) as OrgRow);
    },
    async count() {
      return (s.orgCount.get() as { n: number }).n;
    },
    async createFirst(org) {
      const { changes } = await durable(() => guard(() => s.orgInsertFirst.run({ id: org.id, name: org.name, created_at: new Date().toISOString(), ...limitColumns(org.limits) })));
      return changes === 0 ? null : toOrg(s.orgGet.get(org.id) as OrgRow);
    },
  };

  const keys: KeyRepository = {
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

  // Reservations and charges of concurrent requests share commits (see group-commit.ts).
  // A charge is reported once on disk; a reservation once committed (a power cut ends its request too).
  const group = new GroupCommit<LedgerOp>(writes.batch, classifyWriteError, { needs: (op) => op.kind === 'settle', sync: flushed });
  const ledger: LedgerRepository = {
    async append(entry) {
      return durable(() => guard(() => writes.append.immediate(entry)));
    },
    async reserve(request) {
      checkReserveRequest(request);
      // Most holds fit into the share's spare: no write, no wait.
      return book.grantFromSpare(request, Date.now()) ?? ((await group.run({ kind: 'reserve', request })) as ReserveResult);
    },
    async settle(reservationId, entry) {
      return (await group.run({ kind: 'settle', reservationId, entry })) as AppendResult;
    },
    async release(reservationId) {
      const hold = book.hold(reservationId);
      if (!hold) {
        // Not this process's: a row of its own, made by a server from before shares.
        guard(() => s.reservationDelete.run(reservationId));
        return;
      }
      // The credits become the share's spare; a share left with too much gives it back in a write of its own.
      if (book.release(reservationId)) await group.run({ kind: 'shrink', orgId: hold.orgId });
    },
    async reserved(orgId) {
      const now = Date.now();
      return writes.othersReserved(orgId, now) + book.open(orgId, now);
    },
    async list(orgId, query: PageQuery): Promise<Page<LedgerEntry>> {
      const before = query.startingAfter === undefined ? Number.MAX_SAFE_INTEGER : Number(query.startingAfter);
      const rows = s.ledgerPage.all(orgId, Number.isFinite(before) ? before : 0, query.limit + 1) as LedgerRow[];
      return { data: rows.slice(0, query.limit).map(toEntry), hasMore: rows.length > query.limit };
    },
    async sum(orgId) {
      return (s.ledgerSum.get(orgId) as { total: number }).total;
    },
    async charged(orgId) {
      return s.ledgerCharged.get(orgId) as { credits: number; characters: number };
    },
  };

  const voices: VoiceRepository = {
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

  const dicts: DictRepository = {
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

  // The job queue (jobs.ts): its writes are reported once on disk, but for lease renewals.
  const jobs = sqliteJobs(db, { durable: (write) => durable(() => guard(write)), committed: guard, flushed });

  return {
    orgs,
    keys,
    ledger,
    voices,
    dicts,
    jobs,
    flushStats: () => ({ flushes: walSync.flushes, onEventLoop: walSync.mode === 'event loop', averageMs: walSync.averageFlushMs }),
    async close() {
      // Another process need not wait for this one's shares to lapse.
      try {
        writes.dropShares();
      } catch {
        // Locked or gone: the rows lapse on their own.
      }
      await walSync.close();
      db.close();
    },
  };
}
