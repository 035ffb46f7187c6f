/**
 * @module store/sqlite/jobs
 * The job queue on SQLite (tables and rules: ../job-row.ts). SQLite runs one
 * writer at a time across every process on the file, so a claim's choice and
 * its update, and a create's insert and its read of a colliding row, are each
 * one `BEGIN IMMEDIATE` transaction; every other write is one statement.
 * Writes are reported once the WAL is flushed after them (`durable`), as the
 * store's other writes that must survive a power cut; lease renewals
 * (heartbeats, `lead`) only commit: one lost with the machine leaves a lease
 * shorter than its holder, which was lost with it. A claim that finds nothing
 * wrote nothing and flushes nothing: every server polls for jobs and
 * webhooks each second, and a flush can hold the event loop (`wal-sync.ts`).
 */
import type Database from 'better-sqlite3';
import { checkWhole } from '../checks.js';
import { pageBounds, toJob, zeroCounts, type JobRow } from '../job-row.js';
import type { JobRecord, JobRepository, JobStatus } from '../store.js';

export interface SqliteJobWrites {
  /** Runs a write and resolves once it is on disk. */
  durable<T>(write: () => T): Promise<T>;
  /** Resolves once every write committed before the call is on disk. */
  flushed(): Promise<void>;
  /** Runs a write whose loss in a power cut does no harm (classified like the others). */
  committed<T>(write: () => T): T;
}

const FINISHED = "('succeeded', 'failed', 'cancelled')";
/** A job a claim may take: queued, or running under a lapsed lease. */
const CLAIMABLE = "(status = 'queued' OR (status = 'running' AND lease_expires_at < @now))";

const fromText = (stored: unknown): unknown => JSON.parse(stored as string);
const job = (row: JobRow): JobRecord => toJob(row, fromText);
const jsonOrNull = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

export function sqliteJobs(db: Database.Database, writes: SqliteJobWrites): JobRepository {
  const s = {
    insert: db.prepare(
      `INSERT INTO jobs (id, org_id, key_id, status, spec, model, characters, credits, segments_total, webhook_url, idempotency_key, created_at)
       VALUES (@id, @org_id, @key_id, 'queued', @spec, @model, @characters, @credits, @segments_total, @webhook_url, @idempotency_key, @created_at)
       ON CONFLICT (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING *`,
    ),
    byKey: db.prepare('SELECT * FROM jobs WHERE org_id = ? AND idempotency_key = ?'),
    get: db.prepare('SELECT * FROM jobs WHERE id = ?'),
    firstPage: db.prepare('SELECT * FROM jobs WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT ?'),
    pageAfter: db.prepare(
      `SELECT j.* FROM jobs j JOIN jobs c ON c.id = @after AND c.org_id = j.org_id
       WHERE j.org_id = @org_id AND (j.created_at, j.id) < (c.created_at, c.id)
       ORDER BY j.created_at DESC, j.id DESC LIMIT @limit`,
    ),
    countUnfinished: db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE org_id = ? AND status IN ('queued', 'running')"),
    countByStatus: db.prepare('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status'),
    pick: db.prepare(
      `SELECT id FROM jobs WHERE ${CLAIMABLE}
       AND org_id NOT IN (SELECT org_id FROM jobs WHERE status = 'running' AND lease_expires_at >= @now GROUP BY org_id HAVING COUNT(*) >= @max)
       ORDER BY created_at, id LIMIT 1`,
    ),
    take: db.prepare(
      `UPDATE jobs SET status = 'running', lease_token = @token, lease_expires_at = @until, started_at = COALESCE(started_at, @started),
       attempts = attempts + 1 WHERE id = @id AND ${CLAIMABLE} RETURNING *`,
    ),
    heartbeat: db.prepare("UPDATE jobs SET lease_expires_at = @until WHERE id = @id AND lease_token = @token AND status = 'running'"),
    progress: db.prepare(
      `UPDATE jobs SET segments_done = @segments_done, characters_done = @characters_done, audio_seconds = @audio_seconds
       WHERE id = @id AND lease_token = @token AND status = 'running'`,
    ),
    finish: db.prepare(
      `UPDATE jobs SET status = @status, result = @result, error = @error, finished_at = @finished_at, expires_at = @expires_at,
       lease_token = NULL, lease_expires_at = NULL,
       webhook_state = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END,
       webhook_next_at = CASE WHEN webhook_url IS NOT NULL THEN @now ELSE webhook_next_at END
       WHERE id = @id AND lease_token = @token AND status = 'running'`,
    ),
    cancel: db.prepare(
      `UPDATE jobs SET status = 'cancelled', finished_at = @finished_at, expires_at = @expires_at, lease_token = NULL, lease_expires_at = NULL,
       webhook_state = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END,
       webhook_next_at = CASE WHEN webhook_url IS NOT NULL THEN @now ELSE webhook_next_at END
       WHERE id = @id AND status IN ('queued', 'running') AND billing = 'held' RETURNING *`,
    ),
    setBilling: db.prepare("UPDATE jobs SET billing = ? WHERE id = ? AND billing = 'held'"),
    charging: db.prepare("UPDATE jobs SET billing = 'charged' WHERE id = @id AND lease_token = @token AND status = 'running' AND billing IN ('held', 'charged')"),
    unbilled: db.prepare(`SELECT * FROM jobs WHERE billing = 'held' AND status IN ${FINISHED} ORDER BY finished_at, id LIMIT ?`),
    expired: db.prepare(`SELECT * FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ? AND status IN ${FINISHED} ORDER BY expires_at, id LIMIT ?`),
    delete: db.prepare('DELETE FROM jobs WHERE id = ?'),
    webhookDue: db.prepare("SELECT id FROM jobs WHERE webhook_state = 'pending' AND webhook_next_at <= @now ORDER BY webhook_next_at, id LIMIT 1"),
    webhookTake: db.prepare(
      "UPDATE jobs SET webhook_next_at = @until WHERE id = @id AND webhook_state = 'pending' AND webhook_next_at <= @now RETURNING *",
    ),
    webhookAttempted: db.prepare('UPDATE jobs SET webhook_state = @state, webhook_attempts = @attempts, webhook_next_at = @next_at WHERE id = @id'),
    lead: db.prepare(
      `INSERT INTO leaders (name, owner, expires_at) VALUES (@name, @owner, @until)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE leaders.owner = excluded.owner OR leaders.expires_at < @now
       RETURNING owner`,
    ),
  };

  /** The insert, or the row already under the organisation's idempotency key; under the write lock, so nothing slips in between. */
  const create = db.transaction((params: Record<string, unknown>): { row: JobRow; created: boolean } => {
    const inserted = s.insert.get(params) as JobRow | undefined;
    if (inserted) return { row: inserted, created: true };
    return { row: s.byKey.get(params.org_id, params.idempotency_key) as JobRow, created: false };
  });

  /** The choice and the lease in one write transaction: no other writer, in any process, runs between them. */
  const claim = db.transaction((params: { token: string; now: number; until: number; started: string; max: number }): JobRow | undefined => {
    const picked = s.pick.get({ now: params.now, max: params.max }) as { id: string } | undefined;
    if (!picked) return undefined;
    return s.take.get({ id: picked.id, token: params.token, now: params.now, until: params.until, started: params.started }) as JobRow | undefined;
  });

  const claimWebhook = db.transaction((now: number, until: number): JobRow | undefined => {
    const due = s.webhookDue.get({ now }) as { id: string } | undefined;
    return due ? (s.webhookTake.get({ id: due.id, now, until }) as JobRow | undefined) : undefined;
  });

  return {
    async create(newJob) {
      const params = {
        id: newJob.id,
        org_id: newJob.orgId,
        key_id: newJob.keyId,
        spec: JSON.stringify(newJob.spec ?? null),
        model: newJob.model,
        characters: newJob.characters,
        credits: newJob.credits,
        segments_total: newJob.segmentsTotal,
        webhook_url: newJob.webhookUrl,
        idempotency_key: newJob.idempotencyKey,
        created_at: newJob.createdAt,
      };
      const { row, created } = await writes.durable(() => create.immediate(params));
      return { job: job(row), created };
    },
    async get(id) {
      const row = s.get.get(id) as JobRow | undefined;
      return row ? job(row) : null;
    },
    async list(orgId, query) {
      const { limit, after } = pageBounds(query);
      const rows = (after === null ? s.firstPage.all(orgId, limit + 1) : s.pageAfter.all({ org_id: orgId, after, limit: limit + 1 })) as JobRow[];
      return { data: rows.slice(0, limit).map(job), hasMore: rows.length > limit };
    },
    async countUnfinished(orgId) {
      return (s.countUnfinished.get(orgId) as { n: number }).n;
    },
    async countByStatus() {
      const counts = zeroCounts();
      for (const row of s.countByStatus.all() as { status: JobStatus; n: number }[]) counts[row.status] = row.n;
      return counts;
    },
    async claim(token, now, leaseMs, maxRunningPerOrg) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      checkWhole('maxRunningPerOrg', maxRunningPerOrg, 1);
      const params = { token, now, until: now + leaseMs, started: new Date(now).toISOString(), max: maxRunningPerOrg };
      const row = writes.committed(() => claim.immediate(params));
      if (!row) return null;
      await writes.flushed();
      return job(row);
    },
    async heartbeat(id, token, now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      return writes.committed(() => s.heartbeat.run({ id, token, until: now + leaseMs })).changes > 0;
    },
    async progress(id, token, progress) {
      const { changes } = await writes.durable(() =>
        s.progress.run({
          id,
          token,
          segments_done: progress.segmentsDone,
          characters_done: progress.charactersDone,
          audio_seconds: progress.audioSeconds,
        }),
      );
      return changes > 0;
    },
    async finish(id, token, end) {
      checkWhole('now', end.now);
      const { changes } = await writes.durable(() =>
        s.finish.run({
          id,
          token,
          status: end.status,
          result: jsonOrNull(end.result),
          error: jsonOrNull(end.error),
          finished_at: end.finishedAt,
          expires_at: end.expiresAt,
          now: end.now,
        }),
      );
      return changes > 0;
    },
    async cancel(id, at) {
      checkWhole('now', at.now);
      const row = await writes.durable(() => s.cancel.get({ id, finished_at: at.finishedAt, expires_at: at.expiresAt, now: at.now }) as JobRow | undefined);
      return row ? job(row) : null;
    },
    async charging(id, token) {
      return (await writes.durable(() => s.charging.run({ id, token }))).changes > 0;
    },
    async setBilling(id, billing) {
      await writes.durable(() => s.setBilling.run(billing, id));
    },
    async unbilled(limit) {
      return (s.unbilled.all(limit) as JobRow[]).map(job);
    },
    async expired(now, limit) {
      return (s.expired.all(now, limit) as JobRow[]).map(job);
    },
    async delete(id) {
      return (await writes.durable(() => s.delete.run(id))).changes > 0;
    },
    async claimWebhook(now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      const row = writes.committed(() => claimWebhook.immediate(now, now + leaseMs));
      if (!row) return null;
      await writes.flushed();
      return job(row);
    },
    async webhookAttempted(id, outcome) {
      checkWhole('attempts', outcome.attempts);
      if (outcome.nextAt !== null) checkWhole('nextAt', outcome.nextAt);
      await writes.durable(() => s.webhookAttempted.run({ id, state: outcome.state, attempts: outcome.attempts, next_at: outcome.nextAt }));
    },
    async lead(name, owner, now, ttlMs) {
      checkWhole('now', now);
      checkWhole('ttlMs', ttlMs, 1);
      return writes.committed(() => s.lead.get({ name, owner, now, until: now + ttlMs })) !== undefined;
    },
  };
}
