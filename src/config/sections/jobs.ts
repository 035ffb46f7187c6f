/**
 * @module config/sections/jobs
 * Long-form jobs: limits, retention, where their files go (a folder; a bucket is
 * `storage`), how results are downloaded, how runs are leased, webhooks.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const JOBS_DEFAULTS = {
  enabled: true as boolean | 'auto',
  maxCharacters: 1_000_000,
  maxInputs: 1000,
  retentionHours: 72,
  dir: null,
  concurrency: 1,
  maxRunningPerOrg: 2,
  maxQueuedPerOrg: 100,
  segmentCharacters: 1000,
  inputPauseMs: 1000,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  pollMs: 1_000,
  reservationTtlHours: 24,
  download: 'stream' as const,
  downloadUrlSeconds: 300,
  storageRetryMaxMs: 30_000,
  webhooks: { allowHttp: false, allowPrivateNetworks: false, secret: null, timeoutMs: 10_000, maxAttempts: 8 },
};

const jobsSchema = z
  .object({
    /** Off: `/tts/jobs` is not served and this server runs no jobs. `auto`: on when the jobs' storage is a bucket (`storage`), which every gateway shares. */
    enabled: z.union([z.boolean(), z.literal('auto')]).default(JOBS_DEFAULTS.enabled),
    /** The longest job, in characters counted as for billing. */
    maxCharacters: z.number().int().min(1).default(JOBS_DEFAULTS.maxCharacters),
    /** The most entries `inputs` may hold. */
    maxInputs: z.number().int().min(1).default(JOBS_DEFAULTS.maxInputs),
    /** A finished job, its audio and its timings are kept this long, then removed. */
    retentionHours: z.number().min(0).default(JOBS_DEFAULTS.retentionHours),
    /** Folder of segment outputs and results; null: `<dataDir>/jobs`. Gateways sharing a store must share it (one mount). */
    dir: z.string().min(1).nullable().default(JOBS_DEFAULTS.dir),
    /** Jobs this server runs at once; 0: it runs none (it still takes, lists and serves them). */
    concurrency: z.number().int().min(0).default(JOBS_DEFAULTS.concurrency),
    /** Jobs of one organisation running at once across every server. */
    maxRunningPerOrg: z.number().int().min(1).default(JOBS_DEFAULTS.maxRunningPerOrg),
    /** Jobs of one organisation queued or running; more are refused with `too_many_jobs`. */
    maxQueuedPerOrg: z.number().int().min(1).default(JOBS_DEFAULTS.maxQueuedPerOrg),
    /** A job's text is cut into segments of at most this many characters, each persisted once made. */
    segmentCharacters: z.number().int().min(100).max(5000).default(JOBS_DEFAULTS.segmentCharacters),
    /** Silence between the entries of `inputs`. */
    inputPauseMs: z.number().int().min(0).max(10_000).default(JOBS_DEFAULTS.inputPauseMs),
    /** A running job's lease lapses this long after its server's last heartbeat; then another server resumes it. */
    leaseMs: z.number().int().min(1000).default(JOBS_DEFAULTS.leaseMs),
    heartbeatMs: z.number().int().min(100).default(JOBS_DEFAULTS.heartbeatMs),
    /** How often an idle server looks for queued work (and a job's event stream for progress). */
    pollMs: z.number().int().min(50).default(JOBS_DEFAULTS.pollMs),
    /** How long a job's reservation of credits counts if no server ends it. */
    reservationTtlHours: z.number().min(1).default(JOBS_DEFAULTS.reservationTtlHours),
    /** `stream`: `/audio` sends the result's bytes; `redirect`: it answers 302 to a presigned URL of the bucket (`storage.kind: s3`; else streamed). */
    download: z.enum(['stream', 'redirect']).default(JOBS_DEFAULTS.download),
    /** How long a redirect's presigned URL stays valid. */
    downloadUrlSeconds: z.number().int().min(10).max(7 * 24 * 3600).default(JOBS_DEFAULTS.downloadUrlSeconds),
    /** An unreachable storage pauses a run, tried again with backoff doubling up to this wait. */
    storageRetryMaxMs: z.number().int().min(100).max(600_000).default(JOBS_DEFAULTS.storageRetryMaxMs),
    webhooks: z
      .object({
        /** Accept `http://` webhook URLs (else `https://` only). */
        allowHttp: z.boolean().default(JOBS_DEFAULTS.webhooks.allowHttp),
        /** Accept URLs that resolve to loopback, private, link-local or other internal addresses (an SSRF guard when off). */
        allowPrivateNetworks: z.boolean().default(JOBS_DEFAULTS.webhooks.allowPrivateNetworks),
        /** Signs deliveries (`whsec_…` or any string of 24+ characters); null: generated once and kept in `<dataDir>/webhook-secret`. */
        secret: z.string().min(24).nullable().default(JOBS_DEFAULTS.webhooks.secret),
        timeoutMs: z.number().int().min(100).default(JOBS_DEFAULTS.webhooks.timeoutMs),
        /** Deliveries tried, with backoff, before giving up. */
        maxAttempts: z.number().int().min(1).max(20).default(JOBS_DEFAULTS.webhooks.maxAttempts),
      })
      .strict()
      .default(JOBS_DEFAULTS.webhooks),
  })
  .strict();

export const jobsSection = defineSection('jobs', jobsSchema.default(JOBS_DEFAULTS), {
  VOICEGATE_JOBS: ['enabled', 'boolean'],
  VOICEGATE_JOBS_DIR: ['dir', 'string'],
  VOICEGATE_JOBS_CONCURRENCY: ['concurrency', 'number'],
  VOICEGATE_JOBS_RETENTION_HOURS: ['retentionHours', 'number'],
  VOICEGATE_JOBS_DOWNLOAD: ['download', 'string'],
  VOICEGATE_WEBHOOK_SECRET: [['webhooks', 'secret'], 'string'],
  VOICEGATE_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: [['webhooks', 'allowPrivateNetworks'], 'boolean'],
});

/** As loaded: `enabled: auto` is resolved against the storage (`loadConfig`). */
export type JobsConfig = Omit<z.output<typeof jobsSchema>, 'enabled'> & { enabled: boolean };
