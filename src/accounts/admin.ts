/**
 * @module accounts/admin
 * Operator actions on organisations, keys and credits, with their input
 * checks. The CLI and the admin HTTP API both call these, so the rules live
 * in one place.
 */
import { randomBytes } from 'node:crypto';
import type { AccountsConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import type { ApiKeyRecord, LedgerEntry, Org, OrgLimits, Page, Store } from '../store/store.js';
import { generateKey } from './api-keys.js';

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

/** What an admin action changed: a key (revoked) or an organisation (limits, balance). */
export interface AccountsChange {
  keyId?: string;
  orgId?: string;
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

  async issueKey(orgId: string, name?: unknown): Promise<IssuedKey> {
    await this.getOrg(orgId);
    if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 200)) throw invalid('name must be a string of at most 200 characters');
    const generated = generateKey();
    const record = await this.store.keys.create({
      id: generated.id,
      orgId,
      name: (name as string | undefined) ?? null,
      secretHash: generated.secretHash,
      createdAt: new Date().toISOString(),
    });
    return { record, key: generated.key };
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
