/**
 * @module config/sections/cache
 * The audio cache (docs/operations.md "Audio cache"): repeated requests answered from memory, disk or Redis, byte-identical.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

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

export const cacheSection = defineSection('cache', cacheSchema.default(CACHE_DEFAULTS), {
  VOICEGATE_CACHE: ['enabled', 'boolean'],
  VOICEGATE_CACHE_MEMORY_BYTES: ['memoryBytes', 'number'],
  VOICEGATE_CACHE_DISK_BYTES: ['diskBytes', 'number'],
  VOICEGATE_CACHE_BILL_HITS: ['billHits', 'boolean'],
  VOICEGATE_CACHE_SHARED: ['shared', 'boolean'],
});

export type CacheConfig = z.output<typeof cacheSchema>;
