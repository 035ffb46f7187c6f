/**
 * @module config/sections/accounts
 * Organisations, keys and billing: whether accounts are on, the first organisation's credits, pricing, the admin token, access tokens, reservations, how long a store outage is ridden out, new organisations' limits.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

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
    /**
     * While the store does not answer (a failover), how long a gateway keeps admitting callers from
     * its last-known-good copy of their keys and organisations and the credit it holds; after that,
     * every request is 503 `store_unavailable` until the store answers again.
     */
    outageMaxSeconds: z.number().int().min(0).max(3600).default(300),
    /**
     * The least credit each gateway's share keeps for each organisation beyond its open holds
     * (PostgreSQL), which it can admit on while the store is away; never more than a quarter of what
     * the balance has left. Null: 1,000 credits, or the organisation's grants on that gateway in
     * the current and the previous minute if more.
     */
    outageShareCredits: z.number().int().min(0).nullable().default(null),
    /** Limits given to new organisations. */
    defaultLimits: limitsSchema.default({ maxConcurrent: 8, rateLimit: { requests: 600, perSeconds: 60 } }),
  })
  .strict();

export const accountsSection = defineSection(
  'accounts',
  accountsSchema.default({
    enabled: true,
    startingCredits: 1_000_000,
    usdPerMillionCredits: 30,
    costHeaderAliasPrefix: null,
    adminToken: null,
    tokenSecret: null,
    reservationTtlMs: 15 * 60_000,
    outageMaxSeconds: 300,
    outageShareCredits: null,
    defaultLimits: { maxConcurrent: 8, rateLimit: { requests: 600, perSeconds: 60 } },
  }),
  {
    VOICEGATE_ACCOUNTS: ['enabled', 'boolean'],
    VOICEGATE_ADMIN_TOKEN: ['adminToken', 'string'],
    VOICEGATE_TOKEN_SECRET: ['tokenSecret', 'string'],
    VOICEGATE_STARTING_CREDITS: ['startingCredits', 'number'],
    VOICEGATE_USD_PER_MILLION_CREDITS: ['usdPerMillionCredits', 'number'],
    VOICEGATE_COST_HEADER_PREFIX: ['costHeaderAliasPrefix', 'string'],
    VOICEGATE_RESERVATION_TTL_MS: ['reservationTtlMs', 'number'],
    VOICEGATE_OUTAGE_MAX_SECONDS: ['outageMaxSeconds', 'number'],
    VOICEGATE_OUTAGE_SHARE_CREDITS: ['outageShareCredits', 'number'],
  },
);

export type AccountsConfig = z.output<typeof accountsSchema>;
