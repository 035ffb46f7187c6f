/**
 * @module accounts/gate
 * The accounts implementation of the request gate: API-key authentication,
 * per-key rate and per-org concurrency limits, a reservation of each
 * request's cost against the postpaid balance (granted only while balance −
 * open reservations > 0, so racing requests overshoot by at most one), and
 * one idempotent ledger row per charge that settles its reservation. A
 * charge the store cannot take while it is away goes to this gateway's
 * charge journal, to be written once it answers (`charge-journal.ts`).
 *
 * Key records and organisations are reused for CACHE_MS after a read, so a
 * request costs no store reads on the hot path; an organisation's cached
 * balance follows the balance each charge returns. Changes made through
 * `AccountsAdmin` in this process take effect at once (`invalidate`); changes
 * from another process (the CLI) within CACHE_MS. Requests that miss together
 * share one read, and a record in use is read again in the background once
 * half of CACHE_MS has passed, so under steady traffic no request waits for
 * the store and the pool never sees a burst of the same read.
 *
 * While the store does not answer (`store-outage.ts`, up to
 * `accounts.outageMaxSeconds`), the records read last — every key and
 * organisation used on this gateway within the hour — answer for it: a key's
 * expiry is still enforced, and one revoked before the outage stays refused
 * (its record was dropped or reread). A key never seen here cannot be checked
 * and is refused with `store_unavailable`. Reservations come from this
 * gateway's share (`store/shares.ts`), which needs no round trip; one that
 * does not fit is refused with `store_unavailable`, as is every reservation
 * of a key with a budget, which only the database can decide.
 */
import { ApiError } from '../errors/api-error.js';
import type { Admission, AdmitOptions, AuthenticateOptions, Caller, HeldCharge, RequestGate } from '../synthesis/gate.js';
import type { Logger } from '../log/logger.js';
import type { ApiKeyRecord, BudgetHold, Org, Store } from '../store/store.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import { looksLikeToken, type AccessTokens } from './access-tokens.js';
import { parseKey, secretMatches } from './api-keys.js';
import type { Lease, LimitCounters } from '../limits/counters.js';
import { inNetworks } from './networks.js';
import { costHeaders, creditsFor, type PricingConfig } from './pricing.js';
import { periodReset, periodStart } from './budget-period.js';
import { callerScopes, hasScope } from './scopes.js';
import { isStoreOutage, type ChargeJournal } from './charge-journal.js';
import type { StoreOutage } from './store-outage.js';

/** The key's budget is spent: when it resets, in the message and a header of its own. */
function budgetExceeded(key: ApiKeyRecord, refused: { spent: number; reserved: number }): ApiError {
  const budget = key.budget!;
  const reset = periodReset(budget.period, Date.now());
  const resets = reset ? `it resets at ${reset.toISOString()}` : 'a total budget does not reset: raise it to continue';
  const params = { period: budget.period === 'total' ? 'total' : budget.period === 'day' ? 'daily' : 'monthly', credits: budget.credits, spent: refused.spent, held: refused.reserved, resets };
  return new ApiError('key_budget_exceeded', params, reset ? { 'x-key-budget-resets-at': reset.toISOString() } : {});
}

/** Refuses a key past its `expiresAt` (a time comparison, so it holds the moment the time passes, cached record or not). */
function refuseExpired(record: ApiKeyRecord, now: number): void {
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) throw new ApiError('key_expired', { expiresAt: record.expiresAt });
}

/** Refuses an API key used from outside its `allowedNetworks` (access tokens are not bound: they are made for clients elsewhere). */
function refuseNetwork(record: ApiKeyRecord, address: string | null | undefined): void {
  if (record.allowedNetworks !== null && !inNetworks(address, record.allowedNetworks)) throw new ApiError('network_not_allowed', { address: address ?? 'an unknown address' });
}

/** Last-used times are written at most this often per key, to keep hot paths off the disk. */
const TOUCH_INTERVAL_MS = 60_000;
/** How long a key record or organisation read from the store is reused. */
export const CACHE_MS = 500;
/** A record served this long after its read is read again in the background (it is still served meanwhile). */
export const REFRESH_AFTER_MS = CACHE_MS / 2;
/** The default of `accounts.reservationTtlMs`: how long a reservation counts if its server never settles or drops it (a crash). */
export const RESERVATION_TTL_MS = 15 * 60_000;
/** Attempts at writing one charge before the request fails with `store_unavailable`. */
const CHARGE_ATTEMPTS = 3;

async function retry<T>(action: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (err) {
      if (attempt >= CHARGE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
    }
  }
}

/** Above this many entries, old ones are swept (only keys and organisations that exist are kept: misses are not). */
const CACHE_SWEEP_SIZE = 10_000;
/** A record read this recently is kept as the last-known-good copy for an outage. */
const LAST_KNOWN_GOOD_MS = 3_600_000;

interface Cached<T> {
  value: T;
  /** When the read that produced it started. */
  readAt: number;
}

/** Records read from the store, and the reads under way (one per id; `generation` as when it started). */
interface ReadCache<T> {
  entries: Map<string, Cached<T>>;
  reading: Map<string, { read: Promise<T | null>; generation: number }>;
}

const readCache = <T>(): ReadCache<T> => ({ entries: new Map(), reading: new Map() });

export class AccountsGate implements RequestGate {
  private readonly touched = new Map<string, number>();
  private readonly keys = readCache<ApiKeyRecord>();
  private readonly orgs = readCache<Org>();
  /** Bumped by every invalidation, so a read that raced one is not cached. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: LimitCounters,
    private readonly pricing: PricingConfig,
    private readonly logger: Logger,
    private readonly reservationTtlMs = RESERVATION_TTL_MS,
    /** Verifies access tokens; without it every access token is refused as invalid. */
    private readonly tokens: AccessTokens | null = null,
    /** Where a charge goes when the store does not answer (`charge-journal.ts`); null: such a charge fails its request. */
    private readonly journal: ChargeJournal | null = null,
    /** Whether the store answers; while it is `degraded`, the last-known-good keys and organisations answer for it. */
    private readonly outage: StoreOutage | null = null,
  ) {}

  async authenticate(presented: string | null, options: AuthenticateOptions = {}): Promise<Caller> {
    if (!presented) throw new ApiError('missing_api_key');
    if (looksLikeToken(presented)) return this.authenticateToken(presented, options);
    const parsed = parseKey(presented);
    const record = parsed ? await this.guard('store', () => this.key(parsed.id)) : null;
    const valid = secretMatches(parsed?.secret ?? presented, record?.secretHash ?? null);
    if (!valid || !record || record.revokedAt) throw new ApiError('invalid_api_key');
    const now = Date.now();
    refuseExpired(record, now);
    refuseNetwork(record, options.address);
    if ((this.touched.get(record.id) ?? 0) < now - TOUCH_INTERVAL_MS) {
      this.touched.set(record.id, now);
      this.store.keys.touch(record.id, new Date(now).toISOString()).catch((err) => this.logger.warn({ err }, 'could not record key use'));
    }
    return { orgId: record.orgId, keyId: record.id, scopes: record.scopes, address: options.address ?? null };
  }

  /** An access token: signed and unexpired, its parent key still valid, and allowed on this route. */
  private async authenticateToken(presented: string, options: AuthenticateOptions): Promise<Caller> {
    const verified = this.tokens?.verify(presented) ?? { ok: false as const, reason: 'invalid' as const };
    if (!verified.ok) throw new ApiError(verified.reason === 'expired' ? 'access_token_expired' : 'invalid_access_token');
    const { claims } = verified;
    const record = await this.guard('store', () => this.key(claims.keyId));
    if (!record || record.revokedAt || record.orgId !== claims.orgId) throw new ApiError('invalid_access_token');
    refuseExpired(record, Date.now());
    // Both uses need the tts grant: it is the only one a token can carry.
    if (!options.token || !claims.grants.tts) throw new ApiError('access_token_not_allowed');
    return {
      orgId: claims.orgId,
      keyId: claims.keyId,
      token: { grants: claims.grants, expiresAt: claims.expiresAt },
      scopes: callerScopes(record.scopes, true),
      address: options.address ?? null,
    };
  }

  async admit(caller: Caller, synthesis: SynthesisRequest, options: AdmitOptions): Promise<Admission> {
    const orgId = caller.orgId;
    if (!orgId) throw new ApiError('missing_api_key');
    // A WebSocket lives long: its key is checked again for every turn (the cache follows revocations).
    if (caller.token && caller.token.expiresAt <= Date.now()) throw new ApiError('access_token_expired');
    let key: ApiKeyRecord | null = null;
    if (caller.keyId) {
      key = await this.guard('store', () => this.key(caller.keyId!));
      if (!key || key.revokedAt) throw new ApiError(caller.token ? 'invalid_access_token' : 'invalid_api_key');
      // The key's policy as it stands now (a PATCH reaches the cache at once): expiry, networks, scope, models.
      refuseExpired(key, Date.now());
      if (!caller.token) refuseNetwork(key, caller.address);
      if (!hasScope({ scopes: callerScopes(key.scopes, !!caller.token) }, 'tts')) throw new ApiError('insufficient_scope', { scope: 'tts' });
      const model = synthesis.model.id;
      if (key.models !== null && !key.models.includes(model) && !(synthesis.modelNamed !== undefined && key.models.includes(synthesis.modelNamed))) {
        throw new ApiError('model_not_allowed', { model: synthesis.modelNamed ?? model, allowed: key.models.join(', ') || 'none' });
      }
    }
    const org = await this.guard('store', () => this.org(orgId));
    if (!org) throw new ApiError('invalid_api_key');
    // A cheap early refusal; the reservation below is the check that holds under races.
    if (org.balance <= 0) throw new ApiError('insufficient_credits', { balance: org.balance });

    const rate = org.limits.rateLimit;
    if (rate && caller.keyId) {
      const decision = await this.guard('limits', () => this.limits.consume(caller.keyId!, rate.requests, rate.perSeconds));
      if (!decision.allowed) {
        const seconds = Math.ceil(decision.retryAfterMs / 1000);
        throw new ApiError('rate_limited', { retryAfter: seconds }, { 'retry-after': String(seconds), 'retry-after-ms': String(decision.retryAfterMs) });
      }
    }
    let lease: Lease | null = null;
    if (org.limits.maxConcurrent !== null) {
      lease = await this.guard('limits', () => this.limits.acquire(orgId, org.limits.maxConcurrent!));
      if (!lease) throw new ApiError('overloaded', {}, { 'retry-after': '1' });
    }

    const multiplier = synthesis.model.creditMultiplier;
    const requestId = synthesis.requestId;
    /** Reservation ids (= charge keys) not yet settled. */
    const open = new Set<string>();
    const hold = options.hold;
    const keyOf = (index: number) => (hold && index === 0 ? hold.id : `${requestId}/${index}`);
    // A key with a budget holds against it too, in the period this admission began in.
    const budgetKey = key?.budget ? key : null;
    const budget: BudgetHold | undefined = budgetKey?.budget
      ? { keyId: budgetKey.id, credits: budgetKey.budget.credits, since: periodStart(budgetKey.budget.period, Date.now()).toISOString() }
      : undefined;
    let released = false;
    const reserve = async (index: number, characters: number) => {
      const id = keyOf(index);
      const ttlMs = hold && index === 0 ? hold.ttlMs : this.reservationTtlMs;
      const result = await this.guard('store', () => this.store.ledger.reserve({ id, orgId, credits: creditsFor(characters, multiplier), ttlMs, budget }));
      if (!result.ok) return result;
      // A job's hold outlives this admission: its end settles or drops it (settleHeld / releaseHeld).
      if (hold && index === 0 && !released) return result;
      if (released) {
        // The request ended while this reservation was being made: nothing will settle it.
        await this.store.ledger.release(id).catch((err) => this.releaseFailed(err, id));
        return { ok: false as const, balance: result.balance, reserved: result.reserved };
      }
      open.add(id);
      return result;
    };
    const release = async () => {
      if (released) return;
      released = true;
      const pending = [...open];
      open.clear();
      await Promise.all([
        ...pending.map((id) => this.store.ledger.release(id).catch((err) => this.releaseFailed(err, id))),
        lease?.release().catch((err) => this.logger.warn({ err }, 'could not release a concurrency lease; it lapses on its own')),
      ]);
    };

    let first: Awaited<ReturnType<typeof reserve>>;
    try {
      first = await reserve(0, options.reserveCharacters);
    } catch (err) {
      await release();
      throw err;
    }
    if (!first.ok) {
      await release();
      if (first.budget && budgetKey) throw budgetExceeded(budgetKey, first.budget);
      throw new ApiError('insufficient_credits', { balance: first.balance });
    }
    const cost = creditsFor(synthesis.characters, multiplier);
    const pricing = this.pricing;
    const balance = first.balance;
    const balanceAtAdmission = balance;
    return {
      // Only streams send it (a clip sends its charge's headers): made when asked for.
      get quote() {
        return costHeaders(cost, balance - cost, pricing);
      },
      quoteFor(model) {
        const credits = creditsFor(synthesis.characters, model.creditMultiplier);
        return costHeaders(credits, balance - credits, pricing);
      },
      charge: async (index, characters, served) => {
        const id = keyOf(index);
        // A fallback model's audio is charged at its own price and under its name.
        const credits = creditsFor(characters, served ? served.creditMultiplier : multiplier);
        const entry = {
          orgId,
          kind: 'charge' as const,
          credits: -credits,
          keyId: caller.keyId,
          requestId,
          chargeKey: id,
          clientRequestId: options.clientRequestId,
          model: served ? served.id : synthesis.model.id,
          endpoint: options.endpoint,
          characters,
          reason: null,
        };
        // The key makes a retry safe: a write that failed after committing is not applied twice.
        const journal = this.journal;
        // While the store is known to be away, one try: the journal takes the charge without the retries' waits.
        const write = () => this.store.ledger.settle(id, entry);
        const result = await this.guard('store', () => (journal && this.outage && this.outage.state !== 'available' ? write() : retry(write)).catch((err: unknown) => {
          if (journal && isStoreOutage(err)) return null;
          throw err;
        }));
        open.delete(id);
        if (result === null) this.outage?.failed();
        else this.outage?.answered();
        if (result === null) {
          // The store is away: the charge is on this gateway's disk, written to the store once it answers
          // (under the same key, so once). Its reservation stays held until then, and lapses at worst.
          journal!.append(id, entry);
          const balance = (this.orgs.entries.get(orgId)?.value.balance ?? balanceAtAdmission) - credits;
          this.balanceChanged(orgId, balance);
          return costHeaders(credits, balance, this.pricing);
        }
        this.balanceChanged(orgId, result.balance);
        return costHeaders(credits, result.balance, this.pricing);
      },
      reserve: async (index, characters) => {
        const result = await reserve(index, characters);
        if (!result.ok && result.budget && budgetKey) throw budgetExceeded(budgetKey, result.budget);
        return result.ok;
      },
      release,
    };
  }

  async settleHeld(charge: HeldCharge): Promise<void> {
    const entry = {
      orgId: charge.orgId,
      kind: 'charge' as const,
      credits: -creditsFor(charge.characters, charge.creditMultiplier),
      keyId: charge.keyId,
      requestId: charge.requestId,
      chargeKey: charge.id,
      clientRequestId: null,
      model: charge.model,
      endpoint: charge.endpoint,
      characters: charge.characters,
      reason: null,
    };
    const result = await this.guard('store', () => retry(() => this.store.ledger.settle(charge.id, entry)));
    this.balanceChanged(charge.orgId, result.balance);
  }

  async releaseHeld(id: string): Promise<void> {
    await this.guard('store', () => this.store.ledger.release(id));
  }

  /** Store and counter failures reach clients as their registry codes (503, retry later), never as a 500. */
  private async guard<T>(dependency: 'store' | 'limits', action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (err) {
      if (dependency === 'store' && isStoreOutage(err)) this.outage?.failed();
      if (err instanceof ApiError) throw err;
      this.logger.error({ err, dependency }, 'accounts dependency failed');
      throw new ApiError(dependency === 'store' ? 'store_unavailable' : 'limits_unavailable', {}, { 'retry-after': '1' });
    }
  }

  /** A reservation that could not be dropped lapses on its own; while the store is away that is expected, not worth a line per request. */
  private releaseFailed(err: unknown, id: string): void {
    if (isStoreOutage(err)) this.outage?.failed();
    else this.logger.warn({ err, reservation: id }, 'could not drop a reservation; it lapses on its own');
  }

  /** Forgets every cached key and organisation (changes may have gone unheard: the change bus lost Redis). */
  forgetAll(): void {
    this.generation++;
    this.keys.entries.clear();
    this.orgs.entries.clear();
  }

  /** Forgets cached records after an in-process change (revoked key, new limits or credits). */
  invalidate(change: { keyId?: string; orgId?: string }): void {
    this.generation++;
    if (change.keyId) this.keys.entries.delete(change.keyId);
    if (change.orgId) this.orgs.entries.delete(change.orgId);
  }

  private key(id: string): Promise<ApiKeyRecord | null> {
    return this.cached(this.keys, id, () => this.store.keys.get(id));
  }

  private org(id: string): Promise<Org | null> {
    return this.cached(this.orgs, id, () => this.store.orgs.get(id));
  }

  /**
   * A store read reused for CACHE_MS; misses are not kept. Callers that miss while a read of the
   * same id is under way (and no invalidation came since it started) wait for that read. A hit
   * older than REFRESH_AFTER_MS starts a read in the background and is served meanwhile.
   */
  private cached<T>(cache: ReadCache<T>, id: string, read: () => Promise<T | null>): Promise<T | null> {
    const now = performance.now();
    const hit = cache.entries.get(id);
    const pending = cache.reading.get(id);
    // While the store is away (up to `accounts.outageMaxSeconds`), the last-known-good record answers at once.
    if (hit && (now - hit.readAt < CACHE_MS || this.outage?.servingStale)) {
      // A failed background read changes nothing: the record expires and the next caller's read reports it.
      if (now - hit.readAt >= REFRESH_AFTER_MS && !pending) this.read(cache, id, read, now).catch(() => {});
      return Promise.resolve(hit.value);
    }
    const reading = pending && pending.generation === this.generation ? pending.read : this.read(cache, id, read, now);
    if (!hit || !this.outage) return reading;
    // The read that finds the store gone: the record read last answers for it (an outage just begun).
    return reading.catch((err: unknown) => {
      if (isStoreOutage(err) && this.outage!.servingStale) return hit.value;
      throw err;
    });
  }

  /** Reads one record and caches it, unless an invalidation came meanwhile. */
  private read<T>(cache: ReadCache<T>, id: string, read: () => Promise<T | null>, now: number): Promise<T | null> {
    const generation = this.generation;
    const reading = Promise.resolve()
      .then(read)
      .catch((err: unknown) => {
        if (isStoreOutage(err)) this.outage?.failed();
        throw err;
      })
      .then((value) => {
        this.outage?.answered();
        if (generation !== this.generation) return value;
        if (value === null) cache.entries.delete(id);
        else {
          if (cache.entries.size >= CACHE_SWEEP_SIZE) {
            // Records read within the hour stay: they are the last-known-good copy an outage admits from.
            for (const [key, entry] of cache.entries) if (now - entry.readAt >= LAST_KNOWN_GOOD_MS) cache.entries.delete(key);
          }
          cache.entries.set(id, { value, readAt: now });
        }
        return value;
      })
      .finally(() => {
        if (cache.reading.get(id)?.read === reading) cache.reading.delete(id);
      });
    cache.reading.set(id, { read: reading, generation });
    return reading;
  }

  /** Keeps a cached organisation's balance equal to the one the latest charge produced. */
  private balanceChanged(orgId: string, balance: number): void {
    const hit = this.orgs.entries.get(orgId);
    if (hit) hit.value = { ...hit.value, balance };
  }
}
