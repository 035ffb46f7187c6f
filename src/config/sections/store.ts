/**
 * @module config/sections/store
 * Where accounts, voices, dictionaries, the ledger and the job queue live.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

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

export const storeSection = defineSection('store', storeSchema.default(STORE_DEFAULTS), {
  VOICEGATE_DATABASE_URL: ['databaseUrl', 'string'],
  VOICEGATE_DATABASE_SCHEMA: ['schema', 'string'],
  VOICEGATE_DATABASE_WAIT_MS: ['startupWaitMs', 'number'],
});

export type StoreConfig = z.output<typeof storeSchema>;
