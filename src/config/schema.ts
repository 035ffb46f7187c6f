/**
 * @module config/schema
 * The configuration's shape and defaults, validated with zod, assembled from
 * the sections each concern declares (`sections/`, one line each below) and
 * each engine type's entry. Everything has a default, so an empty config
 * serves speech: eSpeak NG bound to both shipped models, state under ./data,
 * port 8080 on loopback.
 */
import { z } from 'zod';
// Each engine type's entry is declared by the engine itself (src/engines/engine-types.ts).
import { ENGINE_TYPES, engineConfigSchema, type EngineConfig } from '../engines/engine-types.js';
import { defineSection, type ConfigSection, type EnvVariable } from './section.js';
import { accountsSection } from './sections/accounts.js';
import { cacheSection } from './sections/cache.js';
import { elevenlabsSection } from './sections/elevenlabs.js';
import { deepgramSection } from './sections/deepgram.js';
import { jobsSection } from './sections/jobs.js';
import { limitsSection } from './sections/limits.js';
import { logSection } from './sections/log.js';
import { metricsSection } from './sections/metrics.js';
import { modelImportSection } from './sections/model-import.js';
import { openaiSection } from './sections/openai.js';
import { redisSection } from './sections/redis.js';
import { serverSection } from './sections/server.js';
import { storeSection } from './sections/store.js';
import { storageSection } from './sections/storage.js';
import { voicesSection } from './sections/voices.js';
import { wyomingSection } from './sections/wyoming.js';

const containers = z.enum(['raw', 'wav', 'mp3', 'opus', 'flac']);
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
    /** Models that serve a request, in order, when this one cannot (synthesis/fallback). */
    fallback: z.array(z.string().min(1)).optional(),
    /** For the fallback chain: this model's voice id → the voice a fallback model speaks it with, when that model lacks the voice. */
    fallbackVoices: z.record(z.string(), z.string()).optional(),
    /** How long this model's engine may take to its first audio before the chain moves on (overrides the engine's). */
    firstAudioTimeoutMs: z.number().int().min(10).optional(),
    /** Hedging: the next model of the chain runs too when this one has made no audio by then; the first audio wins. */
    hedgeAfterMs: z.number().int().min(1).optional(),
  })
  .strict();

export const DEFAULT_DATA_DIR = './data';

/**
 * The sections, one line each: every concern declares its settings, their defaults and the
 * environment variables that set them in its own file (`sections/`); the schema below and the
 * environment table (`ENVIRONMENT`) are both built from this list.
 */
export const SECTIONS = [
  serverSection,
  defineSection('dataDir', z.string().default(DEFAULT_DATA_DIR), { VOICEGATE_DATA_DIR: [[], 'string'] }),
  /** Local neural models installed on first start and served (`name` or `name=<archive file or URL>`; config/pull.ts). */
  defineSection('pull', z.array(z.string()).default([]), { VOICEGATE_PULL: [[], 'list'] }),
  storeSection,
  logSection,
  accountsSection,
  redisSection,
  limitsSection,
  openaiSection,
  elevenlabsSection,
  deepgramSection,
  metricsSection,
  voicesSection,
  cacheSection,
  jobsSection,
  storageSection,
  wyomingSection,
  modelImportSection,
  defineSection('engines', z.record(z.string(), engineConfigSchema).default({})),
  defineSection('models', z.record(z.string(), modelConfigSchema).default({})),
] as const;

type Shape<T extends readonly ConfigSection[]> = { [S in T[number] as S['key']]: S['schema'] };

export const configSchema = z.strictObject(Object.fromEntries(SECTIONS.map((section) => [section.key, section.schema])) as Shape<typeof SECTIONS>);

/**
 * Every environment variable the configuration reads, in the order they apply (a later one sets the
 * same field over an earlier: `VOICEGATE_PORT` over `PORT`): the sections', then each engine type's
 * for its default entry (`engines.<type>`).
 */
export const ENVIRONMENT: readonly EnvVariable[] = [
  ...SECTIONS.flatMap((section) => section.env),
  ...ENGINE_TYPES.flatMap((registration) =>
    Object.entries(registration.env ?? {}).map(([name, [setting, kind]]) => ({ name, path: ['engines', registration.type, setting], kind })),
  ),
];

export type ConfigInput = z.input<typeof configSchema>;
/** The configuration as loaded: `jobs.enabled: auto` resolved against the storage (`loadConfig`). */
export type Config = Omit<z.output<typeof configSchema>, 'jobs'> & { jobs: JobsConfig };
export { engineConfigSchema, type EngineConfig };
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type { AccountsConfig } from './sections/accounts.js';
export type { TlsConfig } from './sections/server.js';
export type { StoreConfig } from './sections/store.js';
export type { MetricsConfig } from './sections/metrics.js';
export type { RedisConfig } from './sections/redis.js';
export type { LimitsConfig } from './sections/limits.js';
export type { CacheConfig } from './sections/cache.js';
import type { JobsConfig } from './sections/jobs.js';
export type { JobsConfig };
export type { StorageConfig } from './sections/storage.js';
