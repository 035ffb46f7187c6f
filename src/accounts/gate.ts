/**
 * @module accounts/gate
 * The accounts implementation of the request gate: API-key authentication,
 * postpaid credit check, per-key rate and per-org concurrency limits, and
 * one ledger row per charge. Every transport calls it at the same points.
 */
import { ApiError } from '../errors/api-error.js';
import type { Admission, Caller, CredentialSource, Endpoint, RequestGate } from '../http/gate.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import { parseKey, secretMatches } from './api-keys.js';
import { presentedKey } from './credentials.js';
import type { LimitCounters, Release } from './limits.js';
import { costHeaders, creditsFor, type PricingConfig } from './pricing.js';

/** Last-used times are written at most this often per key, to keep hot paths off the disk. */
const TOUCH_INTERVAL_MS = 60_000;

export interface ChargeSpec {
  characters: number;
  endpoint: Endpoint;
}

export class AccountsGate implements RequestGate {
  private readonly touched = new Map<string, number>();

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
    const record = parsed ? await this.store.keys.get(parsed.id) : null;
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
    const org = await this.store.orgs.get(orgId);
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
    const record = (characters: number) =>
      this.store.ledger.append({
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
      hasCredit: async () => ((await this.store.orgs.get(orgId))?.balance ?? 0) > 0,
      release,
    };
  }
}
