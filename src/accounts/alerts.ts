/**
 * @module accounts/alerts
 * Usage alerts: thresholds of a key's budget (50/80/100 % of it in its
 * current period) or of an organisation's balance (under N credits). After a
 * charge, the organisation's alerts are looked at — off the request's path,
 * at most once a second per organisation on each server, never missing the
 * last charge — and every threshold crossed is recorded once per period by
 * the store (`AlertRepository.fire`, unique per alert, threshold and period,
 * so racing servers record it once). A budget's period is its UTC day or
 * month; a balance's runs from the last time credits were added, so a
 * top-up arms its alerts again. The recorded events are an outbox that the
 * webhook deliverer (src/webhooks/) sends from, signed, with the SSRF guard
 * and retries job webhooks have.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import type { AlertEvent, Store, UsageAlert } from '../store/store.js';
import type { WebhookOutbox } from '../webhooks/deliverer.js';
import { periodReset, periodStart } from './budget-period.js';

/** The most thresholds one alert may have. */
export const MAX_THRESHOLDS = 10;
/** Alerts one organisation may have. */
export const MAX_ALERTS_PER_ORG = 50;

export interface UsageAlertsOptions {
  /** An event was recorded: the deliverer should look now. */
  fired: () => void;
  /** The least time between two looks at one organisation's alerts on this server. */
  intervalMs?: number;
  now?: () => number;
}

interface OrgState {
  running: boolean;
  again: boolean;
  last: number;
  timer: NodeJS.Timeout | null;
}

export class UsageAlerts {
  private readonly orgs = new Map<string, OrgState>();
  private readonly intervalMs: number;
  private readonly now: () => number;
  private stopped = false;
  /** Looks under way, for `settled()`. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly options: UsageAlertsOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** The organisation was charged: its alerts are looked at soon (at once when not looked at within the interval). */
  charged(orgId: string): void {
    if (this.stopped) return;
    let state = this.orgs.get(orgId);
    if (!state) this.orgs.set(orgId, (state = { running: false, again: false, last: 0, timer: null }));
    if (state.running || state.timer) {
      state.again = true;
      return;
    }
    const wait = Math.max(0, state.last + this.intervalMs - this.now());
    state.timer = setTimeout(() => this.look(orgId, state!), wait);
    state.timer.unref();
  }

  /** Stops looking; looks under way finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const state of this.orgs.values()) if (state.timer) clearTimeout(state.timer);
    await Promise.allSettled([...this.running]);
  }

  private look(orgId: string, state: OrgState): void {
    state.timer = null;
    state.running = true;
    state.again = false;
    state.last = this.now();
    const run: Promise<void> = this.evaluate(orgId)
      .then(() => undefined)
      .catch((err) => this.logger.warn({ err, orgId }, 'usage alerts could not be looked at; the next charge looks again'))
      .finally(() => {
        this.running.delete(run);
        state.running = false;
        if (state.again) this.charged(orgId);
        else if (!state.timer) this.orgs.delete(orgId);
      });
    this.running.add(run);
  }

  /** Records every threshold the organisation's alerts have crossed in their current periods. */
  async evaluate(orgId: string): Promise<number> {
    const alerts = await this.store.alerts.list(orgId);
    if (alerts.length === 0) return 0;
    const at = this.now();
    let fired = 0;
    let balance: { balance: number; since: number } | null = null;
    for (const alert of alerts) {
      if (alert.balanceBelow?.length) {
        if (!balance) {
          const [org, lastCredit] = await Promise.all([this.store.orgs.get(orgId), this.store.alerts.lastCredit(orgId)]);
          if (!org) return fired;
          balance = { balance: org.balance, since: lastCredit };
        }
        for (const below of alert.balanceBelow) {
          if (balance.balance >= below) continue;
          const body = { type: 'usage.balance_below', data: { alert_id: alert.id, org_id: orgId, below, balance: balance.balance, at: new Date(at).toISOString() } };
          if (await this.fire(alert, `balance:${below}`, `credit:${balance.since}`, body, at)) fired++;
        }
      }
      if (alert.budgetPercent?.length && alert.keyId) {
        const key = await this.store.keys.get(alert.keyId);
        if (!key?.budget || key.revokedAt) continue;
        const since = periodStart(key.budget.period, at).toISOString();
        const spent = await this.store.usage.spent(key.id, since);
        for (const percent of alert.budgetPercent) {
          if (spent * 100 < percent * key.budget.credits) continue;
          const resets = periodReset(key.budget.period, at);
          const data = {
            alert_id: alert.id,
            org_id: orgId,
            key_id: key.id,
            percent,
            budget: { credits: key.budget.credits, period: key.budget.period, spent, period_start: since, resets_at: resets?.toISOString() ?? null },
            at: new Date(at).toISOString(),
          };
          if (await this.fire(alert, `budget:${percent}`, since, { type: 'usage.budget_threshold', data }, at)) fired++;
        }
      }
    }
    return fired;
  }

  private async fire(alert: UsageAlert, threshold: string, period: string, body: unknown, at: number): Promise<boolean> {
    const id = `alev_${randomBytes(8).toString('hex')}`;
    const created = await this.store.alerts.fire(
      { id, alertId: alert.id, orgId: alert.orgId, threshold, period, body: JSON.stringify({ id, ...(body as object) }), createdAt: new Date(at).toISOString() },
      at,
    );
    if (created) {
      this.logger.info({ alertId: alert.id, orgId: alert.orgId, threshold, period }, 'usage alert fired');
      this.options.fired();
    }
    return created;
  }
}

/** The alerts' events as the outbox the webhook deliverer sends from: each to its alert's URL. */
export function alertOutbox(store: Store): WebhookOutbox {
  return {
    async claim(now, leaseMs) {
      const event = await store.alerts.claim(now, leaseMs);
      if (!event) return null;
      const alert = await store.alerts.get(event.alertId);
      return { id: event.id, url: alert?.url ?? null, attempts: event.attempts, body: () => event.body };
    },
    attempted: (id, outcome) => store.alerts.attempted(id, outcome),
  };
}

// --- the operator's side: checks and views shared by the admin API ------------------------------

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

function thresholds(value: unknown, name: string, max: number): number[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_THRESHOLDS) throw invalid(`${name} must be a list of 1 to ${MAX_THRESHOLDS} numbers`);
  for (const item of value) {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 1 || item > max) throw invalid(`${name} must hold integers from 1 to ${max}`);
  }
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/**
 * Makes an alert from the admin API's body `{url, key_id?, budget_percent?, balance_below?}`:
 * `budget_percent` needs a key of the organisation; the URL passes the webhook guard.
 */
export async function createAlert(store: Store, orgId: string, input: Record<string, unknown>, checkUrl: (url: string) => Promise<unknown>): Promise<UsageAlert> {
  if (!(await store.orgs.get(orgId))) throw new ApiError('org_not_found', { id: orgId });
  if (typeof input.url !== 'string' || input.url === '') throw invalid('url must be the webhook URL alerts are sent to');
  const budgetPercent = thresholds(input.budget_percent, 'budget_percent', 1000);
  const balanceBelow = thresholds(input.balance_below, 'balance_below', Number.MAX_SAFE_INTEGER);
  if (!budgetPercent && !balanceBelow) throw invalid('name budget_percent (of a key’s budget), balance_below (credits), or both');
  let keyId: string | null = null;
  if (input.key_id !== undefined && input.key_id !== null) {
    if (typeof input.key_id !== 'string') throw invalid('key_id must be a key id');
    const key = await store.keys.get(input.key_id);
    if (!key || key.orgId !== orgId) throw invalid(`the organization has no key ${input.key_id}`);
    keyId = key.id;
  }
  if (budgetPercent && !keyId) throw invalid('budget_percent watches a key’s budget: name the key in key_id');
  if ((await store.alerts.list(orgId)).length >= MAX_ALERTS_PER_ORG) throw invalid(`an organization may have at most ${MAX_ALERTS_PER_ORG} alerts`);
  await checkUrl(input.url);
  return store.alerts.create({ id: `alert_${randomBytes(8).toString('hex')}`, orgId, keyId, url: input.url, budgetPercent, balanceBelow, createdAt: new Date().toISOString() });
}

export function alertView(alert: UsageAlert, events: AlertEvent[] = []) {
  return {
    id: alert.id,
    org_id: alert.orgId,
    key_id: alert.keyId,
    url: alert.url,
    budget_percent: alert.budgetPercent,
    balance_below: alert.balanceBelow,
    created_at: alert.createdAt,
    events: events.map((e) => ({ id: e.id, threshold: e.threshold, period: e.period, state: e.state, attempts: e.attempts, created_at: e.createdAt })),
  };
}
