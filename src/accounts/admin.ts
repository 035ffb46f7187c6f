/**
 * @module accounts/admin
 * Operator actions on organisations, keys and credits, with their input
 * checks. The CLI and the admin HTTP API both call these, so the rules live
 * in one place.
 */
import type { ModelChange } from '../models/import/sharing.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AccountsConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import type { ApiKeyRecord, BudgetPeriod, KeyPatch, LedgerEntry, Org, OrgLimits, Page, Store } from '../store/store.js';
import { generateKey } from './api-keys.js';
import { periodStart } from './budget-period.js';
import { normaliseCidr } from './networks.js';
import { keyView } from './views.js';
import { SCOPES, isScope } from './scopes.js';

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full key; shown once and never stored. */
  key: string;
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

function positiveIntOrNull(value: unknown, name: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(`${name} must be a positive integer or null`);
  return value;
}

/** Reads limits from admin input (snake_case), keeping current values for absent fields. */
export function parseLimits(input: Record<string, unknown>, current: OrgLimits): OrgLimits {
  const limits: OrgLimits = { ...current };
  if ('max_concurrent' in input) limits.maxConcurrent = positiveIntOrNull(input.max_concurrent, 'max_concurrent');
  if ('rate_limit' in input) {
    const rate = input.rate_limit;
    if (rate === null) limits.rateLimit = null;
    else if (typeof rate === 'object' && !Array.isArray(rate)) {
      const r = rate as Record<string, unknown>;
      limits.rateLimit = {
        requests: positiveIntOrNull(r.requests, 'rate_limit.requests') ?? 0,
        perSeconds: positiveIntOrNull(r.per_seconds ?? 60, 'rate_limit.per_seconds') ?? 60,
      };
      if (limits.rateLimit.requests === 0) throw invalid('rate_limit.requests must be a positive integer');
    } else throw invalid('rate_limit must be {"requests": n, "per_seconds": s} or null');
  }
  return limits;
}

const PERIODS = ['day', 'month', 'total'] as const satisfies readonly BudgetPeriod[];
/** The fields a key's admin input may carry. */
const KEY_FIELDS = ['name', 'budget', 'scopes', 'models', 'expires_at', 'allowed_networks'];
/** An ISO 8601 date and time with its offset (`Z` or `±hh:mm`): a moment, never a local time. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** At most 100 non-empty strings of at most 200 characters (`allowEmpty`: or none); `each`: a further check of every one, with its refusal. */
function stringList(name: string, allowEmpty: boolean, each?: { ok: (text: string) => boolean; refusal: (text: string) => string }) {
  const shape = `${name} must be a list of at most 100 non-empty strings, or null`;
  let item = z.string({ error: shape }).min(1, { error: shape }).max(200, { error: shape }).refine((text) => text.trim() !== '', { error: shape, abort: true });
  if (each) item = item.refine((text) => each.ok(text.trim()), { error: (issue) => each.refusal(String(issue.input).trim()) });
  const list = z.array(item, { error: shape }).max(100, { error: shape });
  return allowEmpty ? list : list.min(1, { error: `${name} must name at least one entry, or be null for no limit` });
}

const EXPIRES = 'expires_at must be an ISO 8601 time with its offset, such as 2027-01-31T00:00:00Z, or null';
const NAME = 'name must be a string of at most 200 characters';
const BUDGET = 'budget must be {"credits": n, "period": "day" | "month" | "total"} or null';

/**
 * A key's name and policy as the admin API and the CLI take them (snake_case), each refusal naming
 * the field. The admin routes declare it as their body; `parseKeyInput` checks the CLI's the same way.
 * What it cannot say (`expires_at` in the future) `parseKeyInput` checks.
 */
export const keyInputSchema = z.strictObject(
  {
    name: z.string({ error: NAME }).max(200, { error: NAME }).nullable().optional().describe('At most 200 characters; null clears it.'),
    budget: z
      .strictObject(
        {
          credits: z.int({ error: 'budget.credits must be a positive integer number of credits' }).min(1, { error: 'budget.credits must be a positive integer number of credits' }),
          period: z.enum(PERIODS, { error: `budget.period must be one of ${PERIODS.join(', ')}` }).describe('UTC calendar periods: a day from 00:00 UTC, a month from its first day; `total` never resets.'),
        },
        { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field budget.${issue.keys[0]}; a budget takes credits and period` : BUDGET) },
      )
      .nullable()
      .optional()
      .describe('Credits the key may spend per period; null: only the organisation’s balance limits it.'),
    scopes: stringList('scopes', true, { ok: isScope, refusal: (scope) => `unknown scope ${scope}; scopes are ${SCOPES.join(', ')}` })
      .meta({ items: { type: 'string', enum: [...SCOPES] } })
      .nullable()
      .optional()
      .describe('What the key may do (docs/billing.md has the routes of each); null: every scope.'),
    models: stringList('models', false).nullable().optional().describe('Model ids the key may synthesise with (a Voicegate id, or the alias the client sends); null: every model.'),
    expires_at: z.string({ error: EXPIRES }).regex(ISO_TIME, { error: EXPIRES }).meta({ format: 'date-time', examples: ['2099-01-01T00:00:00Z'] }).nullable().optional().describe('An ISO 8601 time with its offset, in the future.'),
    allowed_networks: stringList(
      'allowed_networks',
      false,
      { ok: (text) => normaliseCidr(text) !== null, refusal: (text) => `allowed_networks: ${text} is not an IPv4 or IPv6 CIDR block (such as 10.0.0.0/8 or 2001:db8::/32) or address` },
    )
      .meta({ items: { type: 'string', pattern: '^[0-9A-Fa-f:.]+(/\\d{1,3})?$', examples: ['10.0.0.0/8', '2001:db8::/32'] } })
      .nullable()
      .optional()
      .describe('IPv4 and IPv6 CIDR blocks (`10.0.0.0/8`, `2001:db8::/32`; a bare address is one address) the client’s address must be in; null: anywhere.'),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys[0]}; a key takes ${KEY_FIELDS.join(', ')}` : 'send a JSON object') },
);

const unique = (items: string[]): string[] => [...new Set(items.map((item) => item.trim()))];

/**
 * Reads a key's name and policy from admin input (`keyInputSchema`); only the fields present are in
 * the patch, and null clears one. `now` (epoch ms): an `expires_at` must be after it.
 */
export function parseKeyInput(input: Record<string, unknown>, now: number): KeyPatch {
  const parsed = keyInputSchema.safeParse(input);
  if (!parsed.success) throw invalid(parsed.error.issues[0].message);
  const fields = parsed.data;
  const patch: KeyPatch = {};
  if (fields.name !== undefined) patch.name = fields.name;
  if (fields.budget !== undefined) patch.budget = fields.budget;
  if (fields.scopes !== undefined) patch.scopes = fields.scopes === null ? null : SCOPES.filter((scope) => unique(fields.scopes!).includes(scope));
  if (fields.models !== undefined) patch.models = fields.models === null ? null : unique(fields.models);
  if (fields.expires_at !== undefined) {
    if (fields.expires_at === null) patch.expiresAt = null;
    else {
      const ms = Date.parse(fields.expires_at);
      if (Number.isNaN(ms)) throw invalid(EXPIRES);
      if (ms <= now) throw invalid(`expires_at must be in the future (it is ${new Date(now).toISOString()} now)`);
      patch.expiresAt = new Date(ms).toISOString();
    }
  }
  if (fields.allowed_networks !== undefined) {
    patch.allowedNetworks = fields.allowed_networks === null ? null : [...new Set(unique(fields.allowed_networks).map((text) => normaliseCidr(text)!))];
  }
  return patch;
}

const AMOUNT = 'amount must be a non-zero integer number of credits';
const POSITIVE = (name: string) => `${name} must be a positive integer or null`;

/** An organisation's limits as the admin API takes them (`parseLimits` reads them; absent fields keep their values). */
export const limitFields = {
  max_concurrent: z.int({ error: POSITIVE('max_concurrent') }).min(1, { error: POSITIVE('max_concurrent') }).nullable().optional().describe('Requests in flight at once; null: no limit.'),
  rate_limit: z
    .looseObject(
      {
        requests: z
          .int({ error: (issue) => (issue.input === null ? 'rate_limit.requests must be a positive integer' : POSITIVE('rate_limit.requests')) })
          .min(1, { error: POSITIVE('rate_limit.requests') }),
        per_seconds: z.int({ error: POSITIVE('rate_limit.per_seconds') }).min(1, { error: POSITIVE('rate_limit.per_seconds') }).nullable().optional().describe('Default 60.'),
      },
      { error: 'rate_limit must be {"requests": n, "per_seconds": s} or null' },
    )
    .nullable()
    .optional()
    .describe('Requests per window; null: no limit.'),
};

export const limitsInputSchema = z.looseObject(limitFields);

const ORG_NAME = 'name is required (1–200 characters)';

/** `POST /admin/orgs`: a name, starting credits, limits (absent: the configured defaults). */
export const orgCreateInputSchema = z.object(
  {
    name: z.string({ error: ORG_NAME }).max(200, { error: ORG_NAME }).refine((name) => name.trim() !== '', { error: ORG_NAME }).describe('1–200 characters.'),
    credits: z.int({ error: AMOUNT }).optional().describe('Starting credits (a ledger entry, “starting credits”).'),
    limits: limitsInputSchema.optional(),
  },
  { error: ORG_NAME },
);

/** `POST /admin/orgs/{id}/credits`. */
export const creditsInputSchema = z.object(
  {
    amount: z.int({ error: AMOUNT }).refine((amount) => amount !== 0, { error: AMOUNT }).describe('Non-zero; negative takes credits away.'),
    reason: z.string({ error: 'reason is required' }).refine((reason) => reason.trim() !== '', { error: 'reason is required' }),
  },
  { error: AMOUNT },
);

/** What an admin action changed: a key (revoked) or an organisation (limits, balance). */
export interface AccountsChange {
  keyId?: string;
  orgId?: string;
  /** An audio-cache purge: every server removes these entries from its own memory and disk tiers. */
  purge?: { orgId?: string; voiceId?: string };
  /** A model imported or deleted on one gateway: the others fetch or drop it (models/import/sharing). */
  model?: ModelChange;
}

export class AccountsAdmin {
  private readonly listeners: ((change: AccountsChange) => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly config: AccountsConfig,
  ) {}

  /** Calls `listener` after each change to a key or an organisation (so caches can drop it). */
  onChange(listener: (change: AccountsChange) => void): void {
    this.listeners.push(listener);
  }

  /** Tells every server of a change made outside the account records (an audio-cache purge). */
  announce(change: AccountsChange): void {
    this.changed(change);
  }

  private changed(change: AccountsChange): void {
    for (const listener of this.listeners) listener(change);
  }

  async createOrg(input: { name?: unknown; credits?: unknown; limits?: Record<string, unknown> }): Promise<Org> {
    const name = input.name;
    if (typeof name !== 'string' || !name.trim() || name.length > 200) throw invalid('name is required (1–200 characters)');
    const limits = parseLimits(input.limits ?? {}, this.config.defaultLimits);
    const org = await this.store.orgs.create({ id: `org_${randomBytes(8).toString('hex')}`, name: name.trim(), limits });
    return this.withStartingCredits(org, input.credits);
  }

  /** As `createOrg`, but only while the store holds no organisation at all (atomically); null otherwise. */
  async createFirstOrg(input: { name: string; credits?: number }): Promise<Org | null> {
    const org = await this.store.orgs.createFirst({ id: `org_${randomBytes(8).toString('hex')}`, name: input.name, limits: this.config.defaultLimits });
    return org && this.withStartingCredits(org, input.credits);
  }

  private async withStartingCredits(org: Org, credits: unknown): Promise<Org> {
    if (credits !== undefined && credits !== 0) return (await this.addCredits(org.id, credits, 'starting credits')).org;
    return org;
  }

  async getOrg(id: string): Promise<Org> {
    const org = await this.store.orgs.get(id);
    if (!org) throw new ApiError('org_not_found', { id });
    return org;
  }

  listOrgs(): Promise<Org[]> {
    return this.store.orgs.list();
  }

  async setLimits(id: string, input: Record<string, unknown>): Promise<Org> {
    const org = await this.getOrg(id);
    const updated = (await this.store.orgs.setLimits(id, parseLimits(input, org.limits)))!;
    this.changed({ orgId: id });
    return updated;
  }

  /** A new key of the organisation, with its name and policy (`parseKeyInput`'s fields; absent: no limit). */
  async issueKey(orgId: string, name?: unknown, policy: Record<string, unknown> = {}): Promise<IssuedKey> {
    if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) throw invalid('send a JSON object');
    const patch = parseKeyInput({ ...policy, ...(name !== undefined ? { name } : {}) }, Date.now());
    await this.getOrg(orgId);
    const generated = generateKey();
    const { name: parsedName, ...fields } = patch;
    const record = await this.store.keys.create({
      id: generated.id,
      orgId,
      name: parsedName ?? null,
      secretHash: generated.secretHash,
      createdAt: new Date().toISOString(),
      ...fields,
    });
    return { record, key: generated.key };
  }

  async getKey(id: string): Promise<ApiKeyRecord> {
    const key = await this.store.keys.get(id);
    if (!key) throw new ApiError('key_not_found', { id });
    return key;
  }

  /** Changes a key's name or policy (only the fields given; null clears one); every server's gate drops its cached record. */
  async updateKey(id: string, input: Record<string, unknown>): Promise<ApiKeyRecord> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('send a JSON object');
    const patch = parseKeyInput(input, Date.now());
    const key = await this.store.keys.update(id, patch);
    if (!key) throw new ApiError('key_not_found', { id });
    this.changed({ keyId: id });
    return key;
  }

  /** A key as the admin API and the CLI show it: its policy, and its budget with what it spent in the current period. */
  async viewKey(key: ApiKeyRecord): Promise<ReturnType<typeof keyView>> {
    const now = Date.now();
    return keyView(key, await this.spent(key, now), now);
  }

  /** Every key of the organisation, as `viewKey` shows them. */
  async viewKeys(orgId: string): Promise<ReturnType<typeof keyView>[]> {
    return Promise.all((await this.listKeys(orgId)).map((key) => this.viewKey(key)));
  }

  /** Credits the key was charged in its budget's current period; null for a key without a budget. */
  async spent(key: ApiKeyRecord, now = Date.now()): Promise<number | null> {
    if (!key.budget) return null;
    return this.store.usage.spent(key.id, periodStart(key.budget.period, now).toISOString());
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    await this.getOrg(orgId);
    return this.store.keys.list(orgId);
  }

  async revokeKey(id: string): Promise<ApiKeyRecord> {
    const key = await this.store.keys.revoke(id, new Date().toISOString());
    if (!key) throw new ApiError('key_not_found', { id });
    this.changed({ keyId: id });
    return key;
  }

  async addCredits(orgId: string, amount: unknown, reason: unknown): Promise<{ org: Org; entry: LedgerEntry }> {
    await this.getOrg(orgId);
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount === 0) throw invalid('amount must be a non-zero integer number of credits');
    if (typeof reason !== 'string' || !reason.trim()) throw invalid('reason is required');
    const { entry } = await this.store.ledger.append({
      orgId,
      kind: 'credit',
      credits: amount,
      keyId: null,
      requestId: null,
      // An operator's credit is a deliberate act, never retried by the server: no idempotency key.
      chargeKey: null,
      clientRequestId: null,
      model: null,
      endpoint: null,
      characters: null,
      reason: reason.trim(),
    });
    this.changed({ orgId });
    return { org: await this.getOrg(orgId), entry };
  }

  async usage(orgId: string, query: { limit?: unknown; starting_after?: unknown }): Promise<Page<LedgerEntry>> {
    await this.getOrg(orgId);
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit must be an integer from 1 to 1000');
    const startingAfter = query.starting_after === undefined ? undefined : String(query.starting_after);
    if (startingAfter !== undefined && !/^\d+$/.test(startingAfter)) throw invalid('starting_after must be a ledger entry id');
    return this.store.ledger.list(orgId, { limit, startingAfter });
  }
}
