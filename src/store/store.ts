/**
 * @module store/store
 * The persistence interface: organisations, API keys and the credit ledger.
 * Async and free of any SQL dialect, so SQLite (embedded default) and
 * PostgreSQL (scale-out) implement the same contract. Every balance change
 * is one atomic operation that writes its ledger row and the new balance
 * together, so the balance always equals the sum of the organisation's rows.
 */

export interface OrgLimits {
  /** Concurrent active generations; null = unlimited. */
  maxConcurrent: number | null;
  /** Requests per key per window; null = unlimited. */
  rateLimit: { requests: number; perSeconds: number } | null;
}

export interface Org {
  id: string;
  name: string;
  createdAt: string;
  /** Integer credits; may go below zero (postpaid: the last request may overdraw). */
  balance: number;
  limits: OrgLimits;
}

export type BudgetPeriod = 'day' | 'month' | 'total';

/** Credits a key may spend per period; periods start on UTC calendar boundaries (`total`: never resets). */
export interface KeyBudget {
  credits: number;
  period: BudgetPeriod;
}

/**
 * What a key may do, beyond its organisation's balance and limits. Null means no limit: a key made
 * before policies existed keeps every scope and every model.
 */
export interface KeyPolicy {
  budget: KeyBudget | null;
  /** Scope names (`src/accounts/scopes.ts`); null = every scope. */
  scopes: string[] | null;
  /** Model ids the key may use; null = every model. */
  models: string[] | null;
  /** ISO time after which the key is refused (`key_expired`); null = never. */
  expiresAt: string | null;
  /** CIDR blocks the caller's address must be in; null = anywhere. */
  allowedNetworks: string[] | null;
}

export interface ApiKeyRecord extends KeyPolicy {
  id: string;
  orgId: string;
  name: string | null;
  /** SHA-256 of the key's secret part, hex. The key itself is never stored. */
  secretHash: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A change to a key: fields left out stay as they are; null clears a limit. */
export type KeyPatch = Partial<KeyPolicy & { name: string | null }>;

export type LedgerKind = 'charge' | 'credit';

export interface LedgerEntry {
  id: number;
  orgId: string;
  kind: LedgerKind;
  /** Signed change of the balance: negative for charges. */
  credits: number;
  keyId: string | null;
  /** The server-made id of the request this row belongs to. */
  requestId: string | null;
  /**
   * Idempotency key made by the server (`<request id>/<batch index>` for charges); unique in the
   * ledger, so a retried write of the same charge can never apply twice. Null for rows without one.
   */
  chargeKey: string | null;
  /** The `x-request-id` the client sent, recorded for its own tracing; never a key. */
  clientRequestId: string | null;
  model: string | null;
  endpoint: string | null;
  characters: number | null;
  reason: string | null;
  createdAt: string;
}

export type NewLedgerEntry = Omit<LedgerEntry, 'id' | 'createdAt'>;

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export interface PageQuery {
  limit: number;
  /** Return entries after this id in listing order. */
  startingAfter?: string | number;
}

export interface OrgRepository {
  create(org: { id: string; name: string; limits: OrgLimits }): Promise<Org>;
  get(id: string): Promise<Org | null>;
  list(): Promise<Org[]>;
  setLimits(id: string, limits: OrgLimits): Promise<Org | null>;
  count(): Promise<number>;
  /**
   * Creates the organisation only while the store holds none, atomically across every server
   * sharing the store (the first start of several at once on an empty store makes one); null when
   * some organisation already existed and nothing was written.
   */
  createFirst(org: { id: string; name: string; limits: OrgLimits }): Promise<Org | null>;
}

export interface KeyRepository {
  /** Policy fields left out are null (no limit). */
  create(key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt' | keyof KeyPolicy> & Partial<KeyPolicy>): Promise<ApiKeyRecord>;
  get(id: string): Promise<ApiKeyRecord | null>;
  list(orgId: string): Promise<ApiKeyRecord[]>;
  /** Changes a key's name or policy; null when there is no such key. */
  update(id: string, patch: KeyPatch): Promise<ApiKeyRecord | null>;
  revoke(id: string, at: string): Promise<ApiKeyRecord | null>;
  touch(id: string, at: string): Promise<void>;
}

/** Credits held against a balance while a request runs; they count until settled, released or expired. */
export interface Reservation {
  /** Made by the server; the charge that settles it carries the same value as its `chargeKey`. */
  id: string;
  orgId: string;
  /** The key whose budget it also holds against, if any. */
  keyId?: string;
  credits: number;
  /** Epoch milliseconds after which the reservation no longer counts (a crashed server's holds lapse). */
  expiresAt: number;
}

/**
 * A reservation that also holds against a key's budget: granted only while the budget's credits −
 * (what the key was charged since `since` + Σ its open budget reservations) > 0, as well as by the
 * organisation's rule, so racing requests overshoot the budget by at most one reservation too.
 */
export interface BudgetHold {
  keyId: string;
  credits: number;
  /** ISO start of the budget's current period (the Unix epoch for `total`); a whole UTC hour. */
  since: string;
}

export type ReserveResult =
  /** `balance` and `reserved` as they were just before this reservation was added. */
  | { ok: true; reservation: Reservation; balance: number; reserved: number }
  /** `budget`: the key's budget refused it (what the key had spent and held in the period). */
  | { ok: false; balance: number; reserved: number; budget?: { spent: number; reserved: number } };

export interface AppendResult {
  entry: LedgerEntry;
  /** The balance after this row (for a duplicate: the balance now). */
  balance: number;
  /** True when a row with the same `chargeKey` already existed: nothing was written. */
  duplicate: boolean;
}

export interface LedgerRepository {
  /**
   * Appends the row and applies `credits` to the balance atomically; returns the new balance.
   * A row whose `chargeKey` is already in the ledger is not written again (`duplicate: true`).
   */
  append(entry: NewLedgerEntry): Promise<AppendResult>;
  /**
   * Holds `credits` against the organisation's balance, atomically: granted only while
   * balance − Σ open reservations > 0, so however many requests race, the balance can end
   * at most one reservation below zero. Unknown organisation → `ok: false` with balance 0.
   */
  reserve(request: { id: string; orgId: string; credits: number; ttlMs: number; budget?: BudgetHold }): Promise<ReserveResult>;
  /**
   * Turns a reservation into its ledger row in one transaction: the row, the balance change and
   * the removal of the reservation together. Idempotent by `entry.chargeKey`; a reservation that
   * has already expired or gone is no obstacle (the charge is still recorded once).
   */
  settle(reservationId: string, entry: NewLedgerEntry): Promise<AppendResult>;
  /** Drops a reservation without charging; a no-op for one that is gone. */
  release(reservationId: string): Promise<void>;
  /**
   * The credit this server holds for each organisation beyond its open holds (its share's spare):
   * what it can admit on with no round trip, and so while the database is away. Read from memory.
   */
  held?(): { orgId: string; credits: number }[];
  /** Σ credits of the organisation's open (unexpired) reservations. */
  reserved(orgId: string): Promise<number>;
  /** Newest first. */
  list(orgId: string, query: PageQuery): Promise<Page<LedgerEntry>>;
  /** Sum of all the organisation's rows (for audits and tests). */
  sum(orgId: string): Promise<number>;
  /** What the organisation has been charged over all time: credits and characters of its charge rows. */
  charged(orgId: string): Promise<{ credits: number; characters: number }>;
}

/** A voice an organisation cloned; its reference clip is kept (mono 16-bit WAV at 24 kHz). */
export interface StoredVoice {
  id: string;
  orgId: string;
  name: string;
  description: string;
  gender: 'feminine' | 'masculine' | 'gender_neutral';
  language: string;
  accent: string | null;
  /** What the clip says, when the uploader gave it (cloning engines use it). */
  transcript: string | null;
  clipSeconds: number;
  createdAt: string;
  /** Per-engine-type profiles made from the clip, keyed by engine type. */
  profiles: Record<string, unknown>;
}

/** `accent` and `transcript` set to null clear them. */
export type VoicePatch = Partial<Pick<StoredVoice, 'name' | 'description' | 'gender' | 'accent' | 'transcript'>>;

export interface VoiceRepository {
  create(voice: Omit<StoredVoice, 'profiles'>, clip: Buffer): Promise<StoredVoice>;
  get(id: string): Promise<StoredVoice | null>;
  /** The organisation's voices, newest first. */
  list(orgId: string): Promise<StoredVoice[]>;
  update(id: string, patch: VoicePatch): Promise<StoredVoice | null>;
  delete(id: string): Promise<boolean>;
  clip(id: string): Promise<Buffer | null>;
  /** Stores what a cloning-capable engine derived from the clip. */
  setProfile(voiceId: string, engineType: string, data: unknown): Promise<void>;
}

export interface PronunciationItem {
  text: string;
  alias: string;
  case_sensitive?: boolean;
}

export interface PronunciationDict {
  id: string;
  orgId: string;
  name: string;
  items: PronunciationItem[];
  pinned: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface DictRepository {
  create(dict: Omit<PronunciationDict, 'updatedAt'>): Promise<PronunciationDict>;
  get(id: string): Promise<PronunciationDict | null>;
  /** The organisation's dictionaries, newest first. */
  list(orgId: string): Promise<PronunciationDict[]>;
  update(id: string, patch: Partial<Pick<PronunciationDict, 'name' | 'items' | 'pinned'>>): Promise<PronunciationDict | null>;
  delete(id: string): Promise<boolean>;
}

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/**
 * Where a job's money stands: `held` (its reservation) from submit; `charged` once its run begins to
 * charge it, just before it succeeds (`charging`); `released` when it failed or was cancelled. A
 * finished job still `held` is one whose server stopped between its end and its release (or, from
 * an older release, its charge): the reconciler finishes the billing (idempotently).
 */
export type JobBilling = 'held' | 'charged' | 'released';

export interface JobResult {
  contentType: string;
  bytes: number;
  durationSeconds: number;
  /** A timings file was written (word timestamps were asked for, or the SSML has marks). */
  timestamps: boolean;
}

export interface JobError {
  /** A registry code (`src/errors/registry.ts`). */
  code: string;
  message: string;
}

/** Delivery of a job's webhook: `pending` from its end until delivered or given up (`failed`). */
export type WebhookState = 'none' | 'pending' | 'delivered' | 'failed';

export interface JobRecord {
  id: string;
  orgId: string;
  keyId: string | null;
  status: JobStatus;
  /** What the job speaks and how (the jobs module's own JSON), re-read by whichever server runs it. */
  spec: unknown;
  model: string;
  /** Counted as for billing; `credits` is what the job costs (and what is held until it ends). */
  characters: number;
  credits: number;
  segmentsTotal: number;
  /** Segments persisted so far: a resumed run starts at this one. */
  segmentsDone: number;
  charactersDone: number;
  audioSeconds: number;
  webhookUrl: string | null;
  idempotencyKey: string | null;
  billing: JobBilling;
  result: JobResult | null;
  error: JobError | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Set when the job ends: when its audio and row are removed. */
  expiresAt: string | null;
  /** The run holding the job, and when its lease lapses (epoch ms); null while none does. */
  leaseToken: string | null;
  leaseExpiresAt: number | null;
  /** Runs started (claims), the first included. */
  attempts: number;
  webhookState: WebhookState;
  webhookAttempts: number;
  /** Epoch ms when the next delivery attempt is due (also pushed ahead while one is in flight). */
  webhookNextAt: number | null;
}

export type NewJob = Pick<
  JobRecord,
  'id' | 'orgId' | 'keyId' | 'spec' | 'model' | 'characters' | 'credits' | 'segmentsTotal' | 'webhookUrl' | 'idempotencyKey' | 'createdAt'
>;

export interface JobEnd {
  status: 'succeeded' | 'failed';
  result?: JobResult;
  error?: JobError;
  finishedAt: string;
  expiresAt: string;
  /** Epoch ms: the webhook (if the job has a URL) becomes due now. */
  now: number;
}

/**
 * The job queue, in the store's own tables: SQLite embedded, PostgreSQL shared. A run holds a job
 * through a lease (a random token and a lapse time, renewed by heartbeats); every write of a run is
 * fenced by its token, so a run whose lease lapsed and was taken over can no longer change the job.
 * Times are passed in (epoch ms), so every server on one store judges leases by its own clock.
 */
export interface JobRepository {
  /** Inserts the job; when the organisation already has one under `idempotencyKey`, writes nothing and returns that one (`created: false`). */
  create(job: NewJob): Promise<{ job: JobRecord; created: boolean }>;
  get(id: string): Promise<JobRecord | null>;
  /** The organisation's jobs, newest first; `startingAfter` is a job id. */
  list(orgId: string, query: PageQuery): Promise<Page<JobRecord>>;
  /** The organisation's jobs queued or running. */
  countUnfinished(orgId: string): Promise<number>;
  /** Jobs by status over every organisation (metrics). */
  countByStatus(): Promise<Record<JobStatus, number>>;
  /**
   * Leases the oldest job that is queued, or running under a lapsed lease, to `token` until
   * `now + leaseMs`: status running, `startedAt` set on the first run, `attempts` + 1. Atomic across
   * every server on the store: two claims never get the same job. Skips organisations that already
   * hold `maxRunningPerOrg` live leases. Null when there is nothing to run.
   */
  claim(token: string, now: number, leaseMs: number, maxRunningPerOrg: number): Promise<JobRecord | null>;
  /** Renews the lease; false when `token` no longer holds it (it lapsed and was taken, or the job was cancelled): the run must stop. */
  heartbeat(id: string, token: string, now: number, leaseMs: number): Promise<boolean>;
  /** Records the segments persisted so far, fenced by the lease; false when the lease is lost. */
  progress(id: string, token: string, progress: { segmentsDone: number; charactersDone: number; audioSeconds: number }): Promise<boolean>;
  /** Ends a run (fenced): succeeded with its result or failed with its error; the lease is cleared and a webhook becomes pending. False when the lease is lost. */
  finish(id: string, token: string, end: JobEnd): Promise<boolean>;
  /**
   * A run about to charge its job marks it so (billing `charged`), fenced by the lease: from then on
   * the job cannot be cancelled, so a charge is never written for a cancelled job. True again for a
   * run that took the job over after one that marked it (its charge is keyed by the job, so it is
   * written once); false when `token` does not hold a running job.
   */
  charging(id: string, token: string): Promise<boolean>;
  /**
   * A queued or running job whose charge has not begun becomes cancelled (its lease cleared, so its
   * run's next fenced write fails); null when it was none of those.
   */
  cancel(id: string, at: { finishedAt: string; expiresAt: string; now: number }): Promise<JobRecord | null>;
  /** held → `billing`; a no-op for a job no longer held. */
  setBilling(id: string, billing: 'charged' | 'released'): Promise<void>;
  /** Finished jobs (succeeded, failed, cancelled) whose billing is still held, oldest first. */
  unbilled(limit: number): Promise<JobRecord[]>;
  /** Finished jobs whose `expiresAt` is at or before `now` (ISO), oldest first. */
  expired(now: string, limit: number): Promise<JobRecord[]>;
  /** Removes the row; false when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * Takes one due webhook (state pending, `webhookNextAt <= now`) and pushes its `webhookNextAt`
   * to `now + leaseMs`, atomically, so no other server delivers it meanwhile.
   */
  claimWebhook(now: number, leaseMs: number): Promise<JobRecord | null>;
  /** Records a delivery attempt's outcome: delivered, failed for good, or pending again at `nextAt`. */
  webhookAttempted(id: string, outcome: { state: 'delivered' | 'failed' | 'pending'; attempts: number; nextAt: number | null }): Promise<void>;
  /**
   * A named lease for work one server at a time should do (the retention sweeper): true when
   * `owner` holds `name` until `now + ttlMs` (taken fresh, renewed, or taken over after it lapsed).
   */
  lead(name: string, owner: string, now: number, ttlMs: number): Promise<boolean>;
}

/** How a store that flushes its own log to disk is doing (the embedded SQLite store; metrics read it at scrape time). */
export interface FlushStats {
  /** Flushes that completed. */
  flushes: number;
  /** Whether flushes run on the event loop now (a fast disk) or on the thread pool. */
  onEventLoop: boolean;
  /** Average time of the flushes timed on the event loop, in ms; null before the first. */
  averageMs: number | null;
}

/**
 * Usage as the hourly rollup keeps it (`usage_hourly`: charges and failed requests per hour,
 * organisation, key, model and endpoint), written by the same transaction as the ledger row.
 */
export interface UsageRepository {
  /** Credits the key was charged from `since` (ISO, a whole UTC hour) on. */
  spent(keyId: string, since: string): Promise<number>;
  /**
   * Records a request that was admitted and ended in an error without a charge; idempotent by
   * `requestId` (false when it was recorded already). Counted in the rollup by the same transaction.
   */
  recordFailure(failure: RequestFailure): Promise<boolean>;
  /**
   * Charges and failed requests in `[from, to)`, summed per `groupBy` (in that order, ascending):
   * whole hours from the rollup, the partial hours at the edges from the ledger's and failures' own
   * rows, merged in one statement, so the sums equal those of the raw rows. Waits for the writes
   * under way first (the write clock), so a range that ends in the past never changes afterwards.
   * Without `groupBy`, one row of totals.
   */
  summary(query: UsageQuery): Promise<UsageRow[]>;
  /**
   * Every ledger row (charges and credits added) with `created_at` in `[from, to)`, ordered by
   * (created_at, id), read in pages of `pageSize` by keyset, after the same write clock as `summary`.
   */
  entries(query: UsageRange & { pageSize?: number }): AsyncIterable<LedgerEntry>;
}

export type UsageGroup = 'day' | 'hour' | 'model' | 'endpoint' | 'key' | 'org';
export const USAGE_GROUPS: readonly UsageGroup[] = ['day', 'hour', 'model', 'endpoint', 'key', 'org'];

export interface UsageRange {
  /** ISO 8601 UTC with milliseconds (`Date.toISOString()`), inclusive. */
  from: string;
  /** Exclusive; after `from`. */
  to: string;
  /** Only this organisation's rows. */
  orgId?: string;
}

export interface UsageQuery extends UsageRange {
  groupBy: UsageGroup[];
}

export interface UsageRow {
  /** The value of each `groupBy` field: `day` and `hour` ISO UTC; null where the rows have none (a charge without a key). */
  group: Partial<Record<UsageGroup, string | null>>;
  /** Credits charged (positive). */
  credits: number;
  characters: number;
  /** Charged requests (a WebSocket turn's later batches are not more requests). */
  requests: number;
  failedRequests: number;
}

export interface RequestFailure {
  orgId: string;
  keyId: string | null;
  requestId: string;
  model: string | null;
  endpoint: string | null;
  /** The registry code it ended with. */
  code: string;
}

/**
 * A usage alert: thresholds of a key's budget (`budgetPercent`, of the key's budget in its current
 * period) or of the organisation's balance (`balanceBelow`, credits). Each threshold fires once per
 * period: a budget's period, or for a balance the time since credits were last added.
 */
export interface UsageAlert {
  id: string;
  orgId: string;
  /** The key whose budget `budgetPercent` watches; null for an organisation's balance alerts. */
  keyId: string | null;
  url: string;
  budgetPercent: number[] | null;
  balanceBelow: number[] | null;
  createdAt: string;
}

export type AlertEventState = 'pending' | 'delivered' | 'failed';

/** A threshold crossed: one row per alert, threshold and period, which is also its webhook's outbox row. */
export interface AlertEvent {
  id: string;
  alertId: string;
  orgId: string;
  /** `budget:<percent>` or `balance:<credits>`. */
  threshold: string;
  /** The period it fired in: a budget period's start (ISO), or `credit:<ledger id>` for a balance. */
  period: string;
  /** The webhook's JSON body. */
  body: string;
  createdAt: string;
  state: AlertEventState;
  attempts: number;
  /** Epoch ms when the next delivery attempt is due (pushed ahead while one is in flight); null once done. */
  nextAt: number | null;
}

export interface AlertRepository {
  create(alert: UsageAlert): Promise<UsageAlert>;
  get(id: string): Promise<UsageAlert | null>;
  /** The organisation's alerts, oldest first. */
  list(orgId: string): Promise<UsageAlert[]>;
  /** Removes the alert and its events; false when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * Records a threshold crossed, due for delivery at `now`, unless that alert already fired for
   * that threshold in that period: true when this call recorded it (exactly one caller does,
   * however many servers race).
   */
  fire(event: Pick<AlertEvent, 'id' | 'alertId' | 'orgId' | 'threshold' | 'period' | 'body' | 'createdAt'>, now: number): Promise<boolean>;
  /** The alert's events, newest first (at most `limit`). */
  events(alertId: string, limit: number): Promise<AlertEvent[]>;
  /** Takes one due event (pending, `nextAt <= now`) and pushes its `nextAt` to `now + leaseMs`, atomically. */
  claim(now: number, leaseMs: number): Promise<AlertEvent | null>;
  /** Records a delivery attempt's outcome. */
  attempted(id: string, outcome: { state: AlertEventState; attempts: number; nextAt: number | null }): Promise<void>;
  /** The id of the organisation's newest credit row (0 when none): a balance alert's period starts there. */
  lastCredit(orgId: string): Promise<number>;
}

export interface Store {
  readonly orgs: OrgRepository;
  readonly keys: KeyRepository;
  readonly ledger: LedgerRepository;
  readonly usage: UsageRepository;
  readonly alerts: AlertRepository;
  readonly voices: VoiceRepository;
  readonly dicts: DictRepository;
  readonly jobs: JobRepository;
  /** Only a store that flushes a log of its own has these (SQLite); PostgreSQL's durability is its commit. */
  flushStats?(): FlushStats;
  close(): Promise<void>;
}
