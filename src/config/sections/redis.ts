/**
 * @module config/sections/redis
 * Shared state for several servers: limit counters, change notices, the shared cache tier.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

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

export const redisSection = defineSection('redis', redisSchema.default(REDIS_DEFAULTS), {
  VOICEGATE_REDIS_URL: ['url', 'string'],
  VOICEGATE_REDIS_KEY_PREFIX: ['keyPrefix', 'string'],
  VOICEGATE_REDIS_LEASE_TTL_MS: ['leaseTtlMs', 'number'],
});

export type RedisConfig = z.output<typeof redisSchema>;
