/**
 * @module accounts/views
 * JSON shapes of organisations, keys and ledger rows, shared by the admin
 * HTTP API, `GET /usage` and the CLI so all three print the same thing.
 */
import type { ApiKeyRecord, LedgerEntry, Org } from '../store/store.js';
import { periodReset } from './budget-period.js';
import { usd, type PricingConfig } from './pricing.js';

export function orgView(org: Org, pricing: PricingConfig) {
  return {
    id: org.id,
    name: org.name,
    created_at: org.createdAt,
    balance: { credits: org.balance, usd: usd(org.balance, pricing) },
    limits: {
      max_concurrent: org.limits.maxConcurrent,
      rate_limit: org.limits.rateLimit ? { requests: org.limits.rateLimit.requests, per_seconds: org.limits.rateLimit.perSeconds } : null,
    },
  };
}

/**
 * A key and its policy. `spent`: what it was charged in its budget's current period
 * (`AccountsAdmin.spent`); `now` places that period, so `resets_at` is when the next begins (null
 * for a `total` budget).
 */
export function keyView(key: ApiKeyRecord, spent: number | null = null, now = Date.now()) {
  const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= now;
  return {
    id: key.id,
    org_id: key.orgId,
    name: key.name,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    status: key.revokedAt ? 'revoked' : expired ? 'expired' : 'active',
    budget: key.budget
      ? { credits: key.budget.credits, period: key.budget.period, spent: spent ?? 0, resets_at: periodReset(key.budget.period, now)?.toISOString() ?? null }
      : null,
    scopes: key.scopes,
    models: key.models,
    expires_at: key.expiresAt,
    allowed_networks: key.allowedNetworks,
  };
}

export function ledgerView(entry: LedgerEntry, pricing: PricingConfig) {
  return {
    id: String(entry.id),
    kind: entry.kind,
    credits: entry.credits,
    usd: usd(entry.credits, pricing),
    key_id: entry.keyId,
    request_id: entry.requestId,
    charge_key: entry.chargeKey,
    client_request_id: entry.clientRequestId,
    model: entry.model,
    endpoint: entry.endpoint,
    characters: entry.characters,
    reason: entry.reason,
    created_at: entry.createdAt,
  };
}
