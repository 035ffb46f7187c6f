/**
 * @module config/schema
 * The configuration's shape and defaults, validated with zod. Everything has
 * a default, so an empty config serves speech: eSpeak NG bound to both
 * shipped models, state under ./data, port 8080 on loopback.
 */
import { z } from 'zod';
// Each engine type's entry is declared by the engine itself (src/engines/engine-types.ts).
import { engineConfigSchema, type EngineConfig } from '../engines/engine-types.js';

const containers = z.enum(['raw', 'wav', 'mp3', 'opus']);
const encodings = z.enum(['pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw']);

const formatRules = z
  .object({
    containers: z.array(containers).min(1),
    encodings: z.array(encodings),
    sampleRates: z.array(z.number().int().min(8000).max(48000)).min(1),
    defaultEncoding: encodings.optional(),
    mp3BitRates: z.array(z.number().int()),
    defaultMp3BitRate: z.number().int().optional(),
    opusBitRates: z.array(z.number().int()).optional(),
    defaultOpusBitRate: z.number().int().optional(),
  })
  .strict();

const range = z.object({ min: z.number(), max: z.number() }).strict();

/** A model entry: overrides of a shipped profile, or a new model that `extends` one. */
export const modelConfigSchema = z
  .object({
    extends: z.string().optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    engine: z.string().optional(),
    maxTranscriptChars: z.number().int().min(1).optional(),
    clip: formatRules.partial().optional(),
    stream: formatRules.partial().optional(),
    creditMultiplier: z.number().positive().optional(),
    speed: range.nullable().optional(),
    volume: range.nullable().optional(),
    streaming: z.boolean().optional(),
    defaultVoice: z.string().nullable().optional(),
    languages: z.array(z.string()).optional(),
    /** false: this model's responses are never taken from or kept in the audio cache (engines whose output is meant to vary). */
    cache: z.boolean().optional(),
    /** true: speed may be other than 1 on streams. */
    speedOnStreams: z.boolean().optional(),
  })
  .strict();

const WEBSOCKET_DEFAULTS = { maxMessageBytes: 65536, idleTimeoutMs: 300_000, contextTimeoutMs: 600_000, maxContexts: 64, maxBufferDelayMs: 3000 };

const websocketSchema = z
  .object({
    /** Messages over this size get a `payload_too_large` event (the socket stays open). */
    maxMessageBytes: z.number().int().min(1024).default(WEBSOCKET_DEFAULTS.maxMessageBytes),
    /** A connection with no message and no open context for this long is closed (code 4000). */
    idleTimeoutMs: z.number().int().min(1000).default(WEBSOCKET_DEFAULTS.idleTimeoutMs),
    /** A context open longer than this ends with `context_expired`. */
    contextTimeoutMs: z.number().int().min(1000).default(WEBSOCKET_DEFAULTS.contextTimeoutMs),
    maxContexts: z.number().int().min(1).default(WEBSOCKET_DEFAULTS.maxContexts),
    /** Default for `max_buffer_delay_ms`: how long an unfinished clause waits for more text. */
    maxBufferDelayMs: z.number().int().min(0).max(5000).default(WEBSOCKET_DEFAULTS.maxBufferDelayMs),
  })
  .strict();

const limitsSchema = z
  .object({
    maxConcurrent: z.number().int().min(1).nullable(),
    rateLimit: z.object({ requests: z.number().int().min(1), perSeconds: z.number().int().min(1) }).strict().nullable(),
  })
  .strict();

const accountsSchema = z
  .object({
    /** Off: every request is served without a key and nothing is charged. */
    enabled: z.boolean().default(true),
    /** Credits given to the organisation created on first start. */
    startingCredits: z.number().int().min(0).default(1_000_000),
    usdPerMillionCredits: z.number().min(0).default(30),
    /** Repeat the cost headers under this prefix too, e.g. `x-hopper-`. */
    costHeaderAliasPrefix: z.string().regex(/^[a-z0-9-]+-$/).nullable().default(null),
    /** Bearer token for the admin HTTP API; null disables it. */
    adminToken: z.string().min(16).nullable().default(null),
    /** Signs access tokens; null: generated once and kept in `<dataDir>/token-secret`. Instances that share keys must share it. */
    tokenSecret: z.string().min(32).nullable().default(null),
    /**
     * How long a credit reservation counts when its server never settles or drops it (the server
     * crashed): longer than any request or WebSocket turn may run.
     */
    reservationTtlMs: z.number().int().min(1000).max(24 * 3600_000).default(15 * 60_000),
    /** Limits given to new organisations. */
    defaultLimits: limitsSchema.default({ maxConcurrent: 8, rateLimit: { requests: 600, perSeconds: 60 } }),
  })
  .strict();

const REDIS_DEFAULTS = { url: null, keyPrefix: 'voicegate:', leaseTtlMs: 15_000, timeoutMs: 1000 };

/** Shared state for several servers: limit counters and change notices. Without a URL both stay in the process. */
const redisSchema = z
  .object({
    /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
    url: z.url({ protocol: /^rediss?$/, hostname: /^.+$/ }).nullable().default(REDIS_DEFAULTS.url),
    /** Every key and channel starts with this, so deployments can share one Redis. */
    keyPrefix: z.string().min(1).max(100).default(REDIS_DEFAULTS.keyPrefix),
    /** A concurrency slot held by a server that stopped (crashed) comes back after this long; renewed every third of it. */
    leaseTtlMs: z.number().int().min(1000).max(30_000).default(REDIS_DEFAULTS.leaseTtlMs),
    /** Connect and command timeout; beyond it a request gets 503 `limits_unavailable`. */
    timeoutMs: z.number().int().min(50).max(10_000).default(REDIS_DEFAULTS.timeoutMs),
  })
  .strict();

const LIMITS_DEFAULTS = { whenSharedCountersFail: 'local' as const, expectedGateways: null };

/** How the limit counters behave when the shared ones (Redis) cannot be reached. */
const limitsConfigSchema = z
  .object({
    /**
     * `local`: each server enforces the limits on its own, an organisation's limit divided among the
     * servers believed alive, until Redis answers again. `refuse`: 503 `limits_unavailable` meanwhile.
     */
    whenSharedCountersFail: z.enum(['local', 'refuse']).default(LIMITS_DEFAULTS.whenSharedCountersFail),
    /** The servers to divide a limit among while Redis is away; null: those that were alive when it last answered. */
    expectedGateways: z.number().int().min(1).max(10_000).nullable().default(LIMITS_DEFAULTS.expectedGateways),
  })
  .strict();

/** HTTPS (and so WSS) on the server's port: PEM files, or a development CA kept under `<dataDir>/tls/`. */
const tlsSchema = z
  .union([
    z.object({ cert: z.string().min(1), key: z.string().min(1) }).strict(),
    z.object({ selfSigned: z.literal(true) }).strict(),
  ])
  .nullable()
  .default(null);

const VOICES_DEFAULTS = { maxClipBytes: 20 * 1024 * 1024, clipSampleRate: 24000 };

const voicesSchema = z
  .object({
    /** Largest clone upload accepted (413 beyond). */
    maxClipBytes: z.number().int().min(64 * 1024).default(VOICES_DEFAULTS.maxClipBytes),
    /** Cloned clips are stored mono at this rate. */
    clipSampleRate: z.number().int().min(8000).max(48000).default(VOICES_DEFAULTS.clipSampleRate),
  })
  .strict();

const STORE_DEFAULTS = { databaseUrl: null, schema: null, poolSize: 10, timeoutMs: 5000, startupWaitMs: 60_000 };

/** Where accounts, voices and dictionaries live: SQLite under `dataDir` unless a PostgreSQL URL is set. */
const storeSchema = z
  .object({
    /** `postgres://user:password@host:port/database`: use PostgreSQL (several servers may share it). */
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .nullable()
      .default(STORE_DEFAULTS.databaseUrl),
    /** PostgreSQL schema for the tables, created when missing; null: the server's default search_path (usually public). */
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
      .nullable()
      .default(STORE_DEFAULTS.schema),
    /** Connections each server keeps open to PostgreSQL. */
    poolSize: z.number().int().min(1).max(1000).default(STORE_DEFAULTS.poolSize),
    /** Longest wait for a PostgreSQL connection and for each statement; beyond it, 503 `store_unavailable`. */
    timeoutMs: z.number().int().min(100).max(600_000).default(STORE_DEFAULTS.timeoutMs),
    /** At start, how long to wait for a PostgreSQL server that cannot be reached yet before giving up. */
    startupWaitMs: z.number().int().min(0).max(3_600_000).default(STORE_DEFAULTS.startupWaitMs),
  })
  .strict();

const METRICS_DEFAULTS = { enabled: true, public: false, port: null, host: null };

/**
 * `GET /metrics` (Prometheus text). On the main port it needs the admin token unless `public`;
 * with `port` set it is served only there, without authentication, on `host` (default: `server.host`).
 */
const metricsSchema = z
  .object({
    enabled: z.boolean().default(METRICS_DEFAULTS.enabled),
    /** Serve `/metrics` on the main port without the admin token. */
    public: z.boolean().default(METRICS_DEFAULTS.public),
    /** A port of its own for `/metrics` (plain HTTP, no authentication); null: the main port. */
    port: z.number().int().min(0).max(65535).nullable().default(METRICS_DEFAULTS.port),
    /** Interface the metrics port listens on; null: `server.host`. */
    host: z.string().min(1).nullable().default(METRICS_DEFAULTS.host),
  })
  .strict();

const OPENAI_DEFAULTS = {
  modelAliases: { 'tts-1': 'omnivoice', 'tts-1-hd': 'omnivoice', 'gpt-4o-mini-tts': 'omnivoice' },
  voiceAliases: {
    alloy: 'jordan',
    ash: 'michael',
    ballad: 'oliver',
    cedar: 'michael',
    coral: 'emma',
    echo: 'oliver',
    fable: 'oliver',
    marin: 'sarah',
    nova: 'sarah',
    onyx: 'michael',
    sage: 'isla',
    shimmer: 'emma',
    verse: 'jordan',
  },
};

const openaiSchema = z
  .object({
    /** OpenAI model names an unchanged integration sends → model ids here. */
    modelAliases: z.record(z.string(), z.string()).default(OPENAI_DEFAULTS.modelAliases),
    /** OpenAI voice names → voice ids here. */
    voiceAliases: z.record(z.string(), z.string()).default(OPENAI_DEFAULTS.voiceAliases),
  })
  .strict();

/** ElevenLabs' premade voices that apps hardcode, by the built-in voice nearest in gender and accent. */
const ELEVENLABS_VOICES: Record<string, string> = {
  '21m00Tcm4TlvDq8ikWAM': 'sarah', // Rachel
  EXAVITQu4vr4xnSDxMaL: 'sarah', // Sarah (was Bella)
  '9BWtsMINqrJLrRacOk9x': 'sarah', // Aria
  FGY2WhTYpPnrIDTdsKH5: 'sarah', // Laura
  XrExE9yKIg1WjnnlVkGX: 'sarah', // Matilda
  cgSgspJ2msm6clMCkdW9: 'sarah', // Jessica
  MF3mGyEYCl7XYWbV9V6O: 'sarah', // Elli
  AZnzlk1XvdvUeBnXmlld: 'emma', // Domi
  XB0fDUnXU5powFXDhCwa: 'emma', // Charlotte
  pFZP5JQG7iQjIQuC4Bku: 'emma', // Lily
  Xb7hH8MSUJpSbSDYk0k2: 'emma', // Alice
  pNInz6obpgDQGcFmaJgB: 'michael', // Adam
  ErXwobaYiR6Ua3GkAiSt: 'michael', // Antoni
  TxGEqnHWrfWFTfGW9XjX: 'michael', // Josh
  VR6AewLTigWG4xSOukaG: 'michael', // Arnold
  nPczCjzI2devNBz1zQrb: 'michael', // Brian
  TX3LPaxmHKxFdv7VOQHJ: 'michael', // Liam
  cjVigY5qzO86Huf0OWal: 'michael', // Eric
  iP95p4xoKVk53GoZ742B: 'michael', // Chris
  bIHbv24MWmeRgasZH58o: 'michael', // Will (LiveKit's default)
  CwhRBWXzGAHq8TQ4Fs17: 'michael', // Roger
  JBFqnCBsd6RMkjVDRZzb: 'oliver', // George
  onwK4e9ZLuTAKqWW03F9: 'oliver', // Daniel
  N2lVS1w4EtoT3dr4eOWO: 'oliver', // Callum
  IKne3meq5aSn9XLyUdCD: 'oliver', // Charlie
  yoZ06aMxZJJ28mfd3POQ: 'jordan', // Sam
  SAz9YHcvj6GT2YYXdXww: 'jordan', // River
};

const ELEVENLABS_DEFAULTS = {
  modelAliases: {
    eleven_multilingual_v2: 'voicegate-1.0',
    eleven_flash_v2_5: 'voicegate-1.0',
    eleven_turbo_v2_5: 'voicegate-1.0',
    eleven_flash_v2: 'voicegate-1.0',
    eleven_turbo_v2: 'voicegate-1.0',
    eleven_monolingual_v1: 'voicegate-1.0',
    eleven_multilingual_v1: 'voicegate-1.0',
    eleven_v3: 'voicegate-1.0',
  },
  voiceAliases: ELEVENLABS_VOICES,
  defaultModel: 'voicegate-1.0',
  maxContexts: 32,
};

const elevenlabsSchema = z
  .object({
    /** ElevenLabs model ids an unchanged integration sends → model ids here. */
    modelAliases: z.record(z.string(), z.string()).default(ELEVENLABS_DEFAULTS.modelAliases),
    /** ElevenLabs voice ids → voice ids here. */
    voiceAliases: z.record(z.string(), z.string()).default(ELEVENLABS_DEFAULTS.voiceAliases),
    /** The model of a request that names none (ElevenLabs' own default is eleven_multilingual_v2). */
    defaultModel: z.string().min(1).default(ELEVENLABS_DEFAULTS.defaultModel),
    /** Contexts open at once on one `multi-stream-input` socket (ElevenLabs allows 5). */
    maxContexts: z.number().int().min(1).max(1024).default(ELEVENLABS_DEFAULTS.maxContexts),
  })
  .strict();

const MiB = 1024 * 1024;
const CACHE_DEFAULTS = {
  enabled: true,
  memoryBytes: 64 * MiB,
  diskBytes: 512 * MiB,
  maxEntryBytes: 8 * MiB,
  dir: null,
  billHits: true,
  shareAcrossOrganisations: false,
  shared: true,
  sharedMaxEntryBytes: MiB,
  sharedTtlSeconds: 7 * 24 * 3600,
  sharedTimeoutMs: 250,
};

/** The audio cache (docs/operations.md "Audio cache"): repeated requests answered from memory or disk, byte-identical. */
const JOBS_DEFAULTS = {
  enabled: true,
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
  webhooks: { allowHttp: false, allowPrivateNetworks: false, secret: null, timeoutMs: 10_000, maxAttempts: 8 },
};

const jobsSchema = z
  .object({
    /** Off: `/tts/jobs` is not served and this server runs no jobs. */
    enabled: z.boolean().default(JOBS_DEFAULTS.enabled),
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

const cacheSchema = z
  .object({
    enabled: z.boolean().default(CACHE_DEFAULTS.enabled),
    /** Bytes of entries kept in memory, least recently used out first. */
    memoryBytes: z.number().int().min(0).default(CACHE_DEFAULTS.memoryBytes),
    /** Bytes of entries kept on disk; 0: no disk tier. */
    diskBytes: z.number().int().min(0).default(CACHE_DEFAULTS.diskBytes),
    /** A response larger than this is served but not kept. */
    maxEntryBytes: z.number().int().min(1024).default(CACHE_DEFAULTS.maxEntryBytes),
    /** Folder of the disk tier; null: `<dataDir>/cache`. */
    dir: z.string().min(1).nullable().default(CACHE_DEFAULTS.dir),
    /** Hits are charged like misses (as hosted APIs would); false: a hit is charged 0 credits. */
    billHits: z.boolean().default(CACHE_DEFAULTS.billHits),
    /** Entries of built-in voices are reused across organisations (never those of cloned voices). */
    shareAcrossOrganisations: z.boolean().default(CACHE_DEFAULTS.shareAcrossOrganisations),
    /** With `redis.url` set, a third tier in Redis shared by every server; false: each server keeps its own. */
    shared: z.boolean().default(CACHE_DEFAULTS.shared),
    /** An entry larger than this (encoded) is not kept in the shared tier. */
    sharedMaxEntryBytes: z.number().int().min(1024).max(512 * MiB).default(CACHE_DEFAULTS.sharedMaxEntryBytes),
    /** How long an entry lives in the shared tier after it was written. */
    sharedTtlSeconds: z.number().int().min(1).default(CACHE_DEFAULTS.sharedTtlSeconds),
    /** Connect and command timeout of the shared tier; beyond it a lookup is a miss. */
    sharedTimeoutMs: z.number().int().min(10).max(10_000).default(CACHE_DEFAULTS.sharedTimeoutMs),
  })
  .strict();

export const DEFAULT_DATA_DIR = './data';

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        /** Request bodies above this many bytes get 413 before parsing. */
        bodyLimitBytes: z.number().int().min(1024).default(65536),
        /** How long shutdown waits for requests in flight before closing connections. */
        shutdownGraceMs: z.number().int().min(0).default(10000),
        /**
         * After SIGTERM, how long the server keeps accepting while `/readyz` answers 503, so a load
         * balancer stops routing to it before its listener closes.
         */
        drainDelayMs: z.number().int().min(0).max(600_000).default(0),
        websocket: websocketSchema.default(WEBSOCKET_DEFAULTS),
        tls: tlsSchema,
        /**
         * Before listening, run a few requests of every HTTP synthesis endpoint through the routes
         * in-process (unbilled, unlogged, uncounted), so the first callers meet optimised code.
         */
        warmUp: z.boolean().default(true),
      })
      .strict()
      .default({ host: '127.0.0.1', port: 8080, bodyLimitBytes: 65536, shutdownGraceMs: 10000, drainDelayMs: 0, websocket: WEBSOCKET_DEFAULTS, tls: null, warmUp: true }),
    dataDir: z.string().default(DEFAULT_DATA_DIR),
    /** Local neural models installed on first start and served (`name` or `name=<archive file or URL>`; config/pull.ts). */
    pull: z.array(z.string()).default([]),
    store: storeSchema.default(STORE_DEFAULTS),
    log: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
      .strict()
      .default({ level: 'info' }),
    accounts: accountsSchema.default({
      enabled: true,
      startingCredits: 1_000_000,
      usdPerMillionCredits: 30,
      costHeaderAliasPrefix: null,
      adminToken: null,
      tokenSecret: null,
      reservationTtlMs: 15 * 60_000,
      defaultLimits: { maxConcurrent: 8, rateLimit: { requests: 600, perSeconds: 60 } },
    }),
    redis: redisSchema.default(REDIS_DEFAULTS),
    limits: limitsConfigSchema.default(LIMITS_DEFAULTS),
    openai: openaiSchema.default(OPENAI_DEFAULTS),
    elevenlabs: elevenlabsSchema.default(ELEVENLABS_DEFAULTS),
    metrics: metricsSchema.default(METRICS_DEFAULTS),
    voices: voicesSchema.default(VOICES_DEFAULTS),
    cache: cacheSchema.default(CACHE_DEFAULTS),
    jobs: jobsSchema.default(JOBS_DEFAULTS),
    engines: z.record(z.string(), engineConfigSchema).default({}),
    models: z.record(z.string(), modelConfigSchema).default({}),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export { engineConfigSchema, type EngineConfig };
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type AccountsConfig = z.output<typeof accountsSchema>;
export type TlsConfig = z.output<typeof tlsSchema>;
export type StoreConfig = z.output<typeof storeSchema>;
export type MetricsConfig = z.output<typeof metricsSchema>;
export type RedisConfig = z.output<typeof redisSchema>;
export type LimitsConfig = z.output<typeof limitsConfigSchema>;
export type CacheConfig = z.output<typeof cacheSchema>;
export type JobsConfig = z.output<typeof jobsSchema>;
