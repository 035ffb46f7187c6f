/**
 * @module accounts/gate
 * The accounts implementation of the request gate: API-key authentication,
 * postpaid credit check, per-key rate and per-org concurrency limits, and
 * one ledger row per charge. Every transport calls it at the same points.
 *
 * Key records and organisations are reused for CACHE_MS after a read, so a
 * request costs no store reads on the hot path; an organisation's cached
 * balance follows the balance each charge returns. Changes made through
 * `AccountsAdmin` in this process take effect at once (`invalidate`); changes
 * from another process (the CLI) within CACHE_MS.
 */
import { ApiError } from '../errors/api-error.js';
import type { Admission, Caller, CredentialSource, Endpoint, RequestGate } from '../http/gate.js';
import type { Logger } from '../log/logger.js';
import type { ApiKeyRecord, Org, Store } from '../store/store.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import { parseKey, secretMatches } from './api-keys.js';
import { presentedKey } from './credentials.js';
import type { LimitCounters, Release } from './limits.js';
import { costHeaders, creditsFor, type PricingConfig } from './pricing.js';

/** Last-used times are written at most this often per key, to keep hot paths off the disk. */
const TOUCH_INTERVAL_MS = 60_000;
/** How long a key record or organisation read from the store is reused. */
export const CACHE_MS = 500;
/** Above this many entries, expired ones are swept (presented key ids are caller-chosen). */
const CACHE_SWEEP_SIZE = 10_000;

interface Cached<T> {
  value: T;
  readAt: number;
}

export class AccountsGate implements RequestGate {
  private readonly touched = new Map<string, number>();
  private readonly keys = new Map<string, Cached<ApiKeyRecord>>();
  private readonly orgs = new Map<string, Cached<Org>>();
  /** Bumped by every invalidation, so a read that raced one is not cached. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: LimitCounters,
    private readonly pricing: PricingConfig,
    private readonly logger: Logger,
  ) {}

  async authenticate(source: CredentialSource, options: { allowQuery?: boolean } = {}): Promise<Caller> {
    const presented = presentedKey(source.headers, source.url, options.allowQuery ?? false);
    if (!presented) throw new ApiError('missing_api_key');
    const parsed = parseKey(presented);
    const record = parsed ? await this.key(parsed.id) : null;
    const valid = secretMatches(parsed?.secret ?? presented, record?.secretHash ?? null);
    if (!valid || !record || record.revokedAt) throw new ApiError('invalid_api_key');
    const now = Date.now();
    if ((this.touched.get(record.id) ?? 0) < now - TOUCH_INTERVAL_MS) {
      this.touched.set(record.id, now);
      this.store.keys.touch(record.id, new Date(now).toISOString()).catch((err) => this.logger.warn({ err }, 'could not record key use'));
    }
    return { orgId: record.orgId, keyId: record.id };
  }

  async admit(caller: Caller, synthesis: SynthesisRequest, endpoint: Endpoint): Promise<Admission> {
    const orgId = caller.orgId;
    if (!orgId) throw new ApiError('missing_api_key');
    const org = await this.org(orgId);
    if (!org) throw new ApiError('invalid_api_key');
    if (org.balance <= 0) throw new ApiError('insufficient_credits', { balance: org.balance });

    const rate = org.limits.rateLimit;
    if (rate && caller.keyId) {
      const decision = await this.limits.consume(caller.keyId, rate.requests, rate.perSeconds);
      if (!decision.allowed) {
        const seconds = Math.ceil(decision.retryAfterMs / 1000);
        throw new ApiError('rate_limited', { retryAfter: seconds }, { 'retry-after': String(seconds), 'retry-after-ms': String(decision.retryAfterMs) });
      }
    }
    let release: Release = () => {};
    if (org.limits.maxConcurrent !== null) {
      const slot = await this.limits.acquire(orgId, org.limits.maxConcurrent);
      if (!slot) throw new ApiError('overloaded', {}, { 'retry-after': '1' });
      release = slot;
    }

    const multiplier = synthesis.model.creditMultiplier;
    const record = async (characters: number) => {
      const result = await this.store.ledger.append({
        orgId,
        kind: 'charge',
        credits: -creditsFor(characters, multiplier),
        keyId: caller.keyId,
        requestId: synthesis.requestId,
        model: synthesis.model.id,
        endpoint,
        characters,
        reason: null,
      });
      this.balanceChanged(orgId, result.balance);
      return result;
    };
    let charged: Promise<Record<string, string>> | null = null;
    return {
      charge: () => {
        charged ??= record(synthesis.characters).then(({ balance }) =>
          costHeaders(creditsFor(synthesis.characters, multiplier), balance, this.pricing),
        );
        return charged;
      },
      chargeBatch: async (characters) => {
        if (characters > 0) await record(characters);
      },
      hasCredit: async () => ((await this.org(orgId))?.balance ?? 0) > 0,
      release,
    };
  }

  /** Forgets cached records after an in-process change (revoked key, new limits or credits). */
  invalidate(change: { keyId?: string; orgId?: string }): void {
    this.generation++;
    if (change.keyId) this.keys.delete(change.keyId);
    if (change.orgId) this.orgs.delete(change.orgId);
  }

  private key(id: string): Promise<ApiKeyRecord | null> {
    return this.cached(this.keys, id, () => this.store.keys.get(id));
  }

  private org(id: string): Promise<Org | null> {
    return this.cached(this.orgs, id, () => this.store.orgs.get(id));
  }

  /** A store read reused for CACHE_MS; misses are not kept. */
  private async cached<T>(cache: Map<string, Cached<T>>, id: string, read: () => Promise<T | null>): Promise<T | null> {
    const now = performance.now();
    const hit = cache.get(id);
    if (hit && now - hit.readAt < CACHE_MS) return hit.value;
    const generation = this.generation;
    const value = await read();
    if (generation !== this.generation) return value;
    if (value === null) cache.delete(id);
    else {
      if (cache.size >= CACHE_SWEEP_SIZE) {
        for (const [key, entry] of cache) if (now - entry.readAt >= CACHE_MS) cache.delete(key);
      }
      cache.set(id, { value, readAt: now });
    }
    return value;
  }

  /** Keeps a cached organisation's balance equal to the one the latest charge produced. */
  private balanceChanged(orgId: string, balance: number): void {
    const hit = this.orgs.get(orgId);
    if (hit) hit.value = { ...hit.value, balance };
  }
}
