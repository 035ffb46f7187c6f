/**
 * @module store/postgres/jobs
 * The job queue on PostgreSQL (tables and rules: ../job-row.ts), shared by
 * every server on the database. Each operation is one statement, so one round
 * trip and its own transaction. A claim chooses its job in a subquery that
 * locks the row it picks and skips rows other claims hold locked
 * (`FOR UPDATE SKIP LOCKED`), and its update checks the job is still
 * claimable, so two claims never take one job and neither waits for the
 * other. The bound of live leases per organisation is read in the claim's
 * own snapshot: claims racing for one organisation in the same instant on
 * different servers may each see room for one more, so it can be passed by
 * at most the number of such claims, until those jobs end. Webhooks are taken
 * the same way. A create with an idempotency key inserts or, on a collision,
 * does nothing (`ON CONFLICT … DO NOTHING` waits for a concurrent insert of
 * the same key to commit), then reads the row that won in a statement of its
 * own, which sees it.
 */
import { checkWhole } from '../checks.js';
import { pageBounds, toJob, zeroCounts, type JobRow } from '../job-row.js';
import type { JobRecord, JobRepository, JobStatus } from '../store.js';
import type { Run } from './db.js';

const FINISHED = "('succeeded', 'failed', 'cancelled')";
/** `$now` is the parameter holding the claim's time. */
const claimable = (now: string, alias = '') =>
  `(${alias}status = 'queued' OR (${alias}status = 'running' AND ${alias}lease_expires_at < ${now}))`;

/** The driver has already parsed `json` columns. */
const asParsed = (stored: unknown): unknown => stored;
const job = (row: JobRow): JobRecord => toJob(row, asParsed);
const jsonOrNull = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** Sets the webhook of a job with a URL pending, due at `$now`. */
const webhookDue = (now: string) =>
  `webhook_state = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END,
   webhook_next_at = CASE WHEN webhook_url IS NOT NULL THEN ${now}::bigint ELSE webhook_next_at END`;

const SQL = {
  insert: `INSERT INTO jobs (id, org_id, key_id, status, spec, model, characters, credits, segments_total, webhook_url, idempotency_key, created_at)
    VALUES ($1, $2, $3, 'queued', $4::json, $5, $6, $7, $8, $9, $10, $11)
    ON CONFLICT (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING *`,
  byKey: 'SELECT * FROM jobs WHERE org_id = $1 AND idempotency_key = $2',
  get: 'SELECT * FROM jobs WHERE id = $1',
  firstPage: 'SELECT * FROM jobs WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
  pageAfter: `SELECT j.* FROM jobs j JOIN jobs c ON c.id = $2 AND c.org_id = j.org_id
    WHERE j.org_id = $1 AND (j.created_at, j.id) < (c.created_at, c.id)
    ORDER BY j.created_at DESC, j.id DESC LIMIT $3`,
  countUnfinished: "SELECT count(*) AS n FROM jobs WHERE org_id = $1 AND status IN ('queued', 'running')",
  countByStatus: 'SELECT status, count(*) AS n FROM jobs GROUP BY status',
  // $1 token, $2 now, $3 lease end, $4 start time (first run), $5 live leases an organisation may hold.
  claim: `UPDATE jobs SET status = 'running', lease_token = $1, lease_expires_at = $3, started_at = COALESCE(started_at, $4::timestamptz),
      attempts = attempts + 1
    WHERE id = (
      SELECT c.id FROM jobs c
      WHERE ${claimable('$2', 'c.')}
        AND c.org_id NOT IN (
          SELECT r.org_id FROM jobs r WHERE r.status = 'running' AND r.lease_expires_at >= $2 GROUP BY r.org_id HAVING count(*) >= $5)
      ORDER BY c.created_at, c.id
      LIMIT 1 FOR UPDATE SKIP LOCKED)
    AND ${claimable('$2')}
    RETURNING *`,
  heartbeat: "UPDATE jobs SET lease_expires_at = $3 WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id",
  progress: `UPDATE jobs SET segments_done = $3, characters_done = $4, audio_seconds = $5
    WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
  finish: `UPDATE jobs SET status = $3, result = $4::json, error = $5::json, finished_at = $6, expires_at = $7,
      lease_token = NULL, lease_expires_at = NULL, ${webhookDue('$8')}
    WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
  cancel: `UPDATE jobs SET status = 'cancelled', finished_at = $2, expires_at = $3, lease_token = NULL, lease_expires_at = NULL, ${webhookDue('$4')}
    WHERE id = $1 AND status IN ('queued', 'running') AND billing = 'held' RETURNING *`,
  setBilling: "UPDATE jobs SET billing = $2 WHERE id = $1 AND billing = 'held'",
  charging: "UPDATE jobs SET billing = 'charged' WHERE id = $1 AND lease_token = $2 AND status = 'running' AND billing IN ('held', 'charged') RETURNING id",
  unbilled: `SELECT * FROM jobs WHERE billing = 'held' AND status IN ${FINISHED} ORDER BY finished_at, id LIMIT $1`,
  expired: `SELECT * FROM jobs WHERE expires_at <= $1::timestamptz AND status IN ${FINISHED} ORDER BY expires_at, id LIMIT $2`,
  delete: 'DELETE FROM jobs WHERE id = $1 RETURNING id',
  // $1 now, $2 when another server may take it again.
  claimWebhook: `UPDATE jobs SET webhook_next_at = $2
    WHERE id = (
      SELECT w.id FROM jobs w WHERE w.webhook_state = 'pending' AND w.webhook_next_at <= $1
      ORDER BY w.webhook_next_at, w.id LIMIT 1 FOR UPDATE SKIP LOCKED)
    AND webhook_state = 'pending' AND webhook_next_at <= $1
    RETURNING *`,
  webhookAttempted: 'UPDATE jobs SET webhook_state = $2, webhook_attempts = $3, webhook_next_at = $4 WHERE id = $1',
  // $1 name, $2 owner, $3 now, $4 until.
  lead: `INSERT INTO leaders (name, owner, expires_at) VALUES ($1, $2, $4)
    ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    WHERE leaders.owner = excluded.owner OR leaders.expires_at < $3
    RETURNING owner`,
};

/** How often a create retries when the job under its key is deleted between its insert and its read. */
const CREATE_ATTEMPTS = 3;

export function postgresJobs(query: Run): JobRepository {
  return {
    async create(newJob) {
      const params = [
        newJob.id,
        newJob.orgId,
        newJob.keyId,
        JSON.stringify(newJob.spec ?? null),
        newJob.model,
        newJob.characters,
        newJob.credits,
        newJob.segmentsTotal,
        newJob.webhookUrl,
        newJob.idempotencyKey,
        newJob.createdAt,
      ];
      for (let attempt = 1; ; attempt++) {
        const [inserted] = await query<JobRow>(SQL.insert, params);
        if (inserted) return { job: job(inserted), created: true };
        const [existing] = await query<JobRow>(SQL.byKey, [newJob.orgId, newJob.idempotencyKey]);
        if (existing) return { job: job(existing), created: false };
        if (attempt >= CREATE_ATTEMPTS) throw new Error(`job under idempotency key ${newJob.idempotencyKey} kept disappearing`);
      }
    },
    async get(id) {
      const [row] = await query<JobRow>(SQL.get, [id]);
      return row ? job(row) : null;
    },
    async list(orgId, pageQuery) {
      const { limit, after } = pageBounds(pageQuery);
      const rows = after === null ? await query<JobRow>(SQL.firstPage, [orgId, limit + 1]) : await query<JobRow>(SQL.pageAfter, [orgId, after, limit + 1]);
      return { data: rows.slice(0, limit).map(job), hasMore: rows.length > limit };
    },
    async countUnfinished(orgId) {
      const [row] = await query<{ n: number }>(SQL.countUnfinished, [orgId]);
      return row.n;
    },
    async countByStatus() {
      const counts = zeroCounts();
      for (const row of await query<{ status: JobStatus; n: number }>(SQL.countByStatus)) counts[row.status] = row.n;
      return counts;
    },
    async claim(token, now, leaseMs, maxRunningPerOrg) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      checkWhole('maxRunningPerOrg', maxRunningPerOrg, 1);
      const [row] = await query<JobRow>(SQL.claim, [token, now, now + leaseMs, new Date(now).toISOString(), maxRunningPerOrg]);
      return row ? job(row) : null;
    },
    async heartbeat(id, token, now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      return (await query(SQL.heartbeat, [id, token, now + leaseMs])).length > 0;
    },
    async progress(id, token, progress) {
      return (await query(SQL.progress, [id, token, progress.segmentsDone, progress.charactersDone, progress.audioSeconds])).length > 0;
    },
    async finish(id, token, end) {
      checkWhole('now', end.now);
      const params = [id, token, end.status, jsonOrNull(end.result), jsonOrNull(end.error), end.finishedAt, end.expiresAt, end.now];
      return (await query(SQL.finish, params)).length > 0;
    },
    async cancel(id, at) {
      checkWhole('now', at.now);
      const [row] = await query<JobRow>(SQL.cancel, [id, at.finishedAt, at.expiresAt, at.now]);
      return row ? job(row) : null;
    },
    async charging(id, token) {
      return (await query(SQL.charging, [id, token])).length > 0;
    },
    async setBilling(id, billing) {
      await query(SQL.setBilling, [id, billing]);
    },
    async unbilled(limit) {
      return (await query<JobRow>(SQL.unbilled, [limit])).map(job);
    },
    async expired(now, limit) {
      return (await query<JobRow>(SQL.expired, [now, limit])).map(job);
    },
    async delete(id) {
      return (await query(SQL.delete, [id])).length > 0;
    },
    async claimWebhook(now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      const [row] = await query<JobRow>(SQL.claimWebhook, [now, now + leaseMs]);
      return row ? job(row) : null;
    },
    async webhookAttempted(id, outcome) {
      checkWhole('attempts', outcome.attempts);
      if (outcome.nextAt !== null) checkWhole('nextAt', outcome.nextAt);
      await query(SQL.webhookAttempted, [id, outcome.state, outcome.attempts, outcome.nextAt]);
    },
    async lead(name, owner, now, ttlMs) {
      checkWhole('now', now);
      checkWhole('ttlMs', ttlMs, 1);
      return (await query(SQL.lead, [name, owner, now, now + ttlMs])).length > 0;
    },
  };
}
