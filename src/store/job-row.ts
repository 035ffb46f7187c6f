/**
 * @module store/job-row
 * The job queue's tables as both stores lay them out, and a row's mapping to
 * its `JobRecord`.
 *
 * `jobs` holds one row per job: what it speaks (`spec`, JSON, up to a few MB,
 * never queried inside), its billing counts, its progress, its billing state,
 * its outcome (`result` or `error`, JSON), its times, the lease of the run
 * holding it, and its webhook's delivery state. Wall-clock times are stored
 * as the other tables store theirs (ISO text in SQLite, `timestamptz` in
 * PostgreSQL); leases and webhook due times are epoch milliseconds (integers),
 * passed in by the caller, so every server judges them by its own clock.
 * A lease is live while `lease_expires_at >= now` and lapsed once it is
 * `< now`; a named lease in `leaders` likewise.
 *
 * - An idempotency key is unique per organisation (a partial unique index);
 *   a create that collides inserts nothing and returns the existing row.
 * - A claim takes the oldest job (by `created_at`, then `id`) that is queued
 *   or running under a lapsed lease, of an organisation holding fewer than the
 *   bound of live leases, atomically: SQLite in one write transaction,
 *   PostgreSQL in one statement that skips rows other claims hold locked.
 * - Every write of a run is fenced by `id`, its lease token and status
 *   `running`, and reports whether a row changed. Ending a run (finish) or a
 *   job (cancel) clears the lease; a job with a webhook URL then has its
 *   webhook pending, due at once. A run marks its job `charged` (fenced)
 *   before it writes the charge; a job so marked is no longer cancelled.
 * - Listing is newest first by (`created_at`, `id`); `startingAfter` names a
 *   job of the same organisation and the page starts after its position. An id
 *   that names no job of that organisation (unknown, another organisation's,
 *   or deleted since) gives an empty page: a cursor that cannot be placed ends
 *   the listing rather than starting it again.
 * - `unbilled` is oldest first by `finished_at`, `expired` by `expires_at`
 *   (then `id`): the jobs waiting longest first.
 */
import type { JobBilling, JobError, JobRecord, JobResult, JobStatus, WebhookState } from './store.js';

/** A `jobs` row as both stores name its columns; times are ISO text in SQLite, `Date` from PostgreSQL; JSON is text in SQLite. */
export interface JobRow<Time extends string | Date = string | Date> {
  id: string;
  org_id: string;
  key_id: string | null;
  status: JobStatus;
  spec: unknown;
  model: string;
  characters: number;
  credits: number;
  segments_total: number;
  segments_done: number;
  characters_done: number;
  audio_seconds: number;
  webhook_url: string | null;
  idempotency_key: string | null;
  billing: JobBilling;
  result: unknown;
  error: unknown;
  created_at: Time;
  started_at: Time | null;
  finished_at: Time | null;
  expires_at: Time | null;
  lease_token: string | null;
  lease_expires_at: number | null;
  attempts: number;
  webhook_state: WebhookState;
  webhook_attempts: number;
  webhook_next_at: number | null;
}

const iso = (time: string | Date): string => (typeof time === 'string' ? time : time.toISOString());
const isoOrNull = (time: string | Date | null): string | null => (time === null ? null : iso(time));

/** `json` turns a stored JSON value into its value: `JSON.parse` for SQLite's text, as is for what PostgreSQL's driver parsed. */
export function toJob(row: JobRow, json: (stored: unknown) => unknown): JobRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    keyId: row.key_id,
    status: row.status,
    spec: json(row.spec),
    model: row.model,
    characters: row.characters,
    credits: row.credits,
    segmentsTotal: row.segments_total,
    segmentsDone: row.segments_done,
    charactersDone: row.characters_done,
    audioSeconds: row.audio_seconds,
    webhookUrl: row.webhook_url,
    idempotencyKey: row.idempotency_key,
    billing: row.billing,
    result: row.result === null ? null : (json(row.result) as JobResult),
    error: row.error === null ? null : (json(row.error) as JobError),
    createdAt: iso(row.created_at),
    startedAt: isoOrNull(row.started_at),
    finishedAt: isoOrNull(row.finished_at),
    expiresAt: isoOrNull(row.expires_at),
    leaseToken: row.lease_token,
    leaseExpiresAt: row.lease_expires_at,
    attempts: row.attempts,
    webhookState: row.webhook_state,
    webhookAttempts: row.webhook_attempts,
    webhookNextAt: row.webhook_next_at,
  };
}

/** Every status at zero, to fill in the ones a count found none of. */
export function zeroCounts(): Record<JobStatus, number> {
  return { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
}

/** The page size asked for, and the row id the page starts after (null: from the newest). */
export function pageBounds(query: { limit: number; startingAfter?: string | number }): { limit: number; after: string | null } {
  const limit = Math.max(0, Math.trunc(query.limit));
  return { limit: Number.isFinite(limit) ? limit : 0, after: query.startingAfter === undefined ? null : String(query.startingAfter) };
}
