/**
 * @module webhooks/deliverer
 * The loop that delivers webhooks from an outbox in the store (a job's end,
 * a usage alert), apart from whatever made them, so a slow or dead receiver
 * never holds that up. It claims a due message from the outbox (which pushes
 * its due time ahead, so no other server takes it meanwhile), signs and POSTs
 * it, and records the outcome: delivered, pending again after a backoff, or
 * failed once `maxAttempts` were tried. Idle, it polls; `kick()` wakes it at
 * once when a message is due. Nothing it meets is thrown out of the loop.
 */
import { redactUrl, type Logger } from '../log/logger.js';
import { deliverWebhook, type DeliveryResult } from './deliver.js';
import { signWebhook } from './signature.js';
import { webhookDiagnostics, type WebhookAttempt } from './diagnostics.js';
import type { WebhookLookup } from './url-guard.js';

/** Waits after attempts 1, 2, 3 …; the last repeats. With the default 8 attempts a webhook is tried over about 4 hours. */
export const WEBHOOK_BACKOFF_MS: readonly number[] = [5_000, 25_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];

/** Beyond the delivery's own timeout, how long a claim holds (a store write, a slow lookup). */
export const CLAIM_MARGIN_MS = 5_000;

/** The wait after failed attempt `attempt` (from 1), ±20 % so receivers that failed together are not retried together. */
export function webhookBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = WEBHOOK_BACKOFF_MS[Math.min(Math.max(attempt, 1), WEBHOOK_BACKOFF_MS.length) - 1];
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** One message per outbox row (a job's end, an alert's firing), so the id stays the same across retries and receivers can drop duplicates. */
export function webhookMessageId(rowId: string): string {
  return `msg_${rowId}`;
}

/** A message claimed from an outbox. */
export interface WebhookMessage {
  /** The outbox row's id (a job id, an alert event id). */
  id: string;
  url: string | null;
  /** Attempts made before this one. */
  attempts: number;
  /** The JSON body, made when claimed. */
  body(): string;
  /** The trace context (W3C headers) of what it announces, where that was traced (a job's). */
  trace?: Record<string, string> | null;
}

export type WebhookOutcome = { state: 'delivered' | 'failed' | 'pending'; attempts: number; nextAt: number | null };

/** Where due messages wait: a store's rows, claimed one at a time under a lease. */
export interface WebhookOutbox {
  claim(now: number, leaseMs: number): Promise<WebhookMessage | null>;
  attempted(id: string, outcome: WebhookOutcome): Promise<void>;
}

export interface WebhookDelivererOptions {
  outbox: WebhookOutbox;
  /** What the messages are, in log lines (`job`, `alert`). */
  kind?: string;
  /** The server's instance id, for the attempt events (`diagnostics.ts`). */
  instance?: string;
  secret: string;
  options: { allowHttp: boolean; allowPrivateNetworks: boolean; timeoutMs: number; maxAttempts: number };
  logger: Logger;
  /** Epoch ms. */
  now?: () => number;
  /** How often an idle loop looks for due webhooks. */
  pollMs?: number;
  /** Deliveries at once on this server. */
  concurrency?: number;
  /** The wait after a failed attempt (tests shorten it). */
  backoffMs?: (attempt: number) => number;
  lookup?: WebhookLookup;
  /** How long `stop()` lets a delivery in flight finish before cutting it off (it is then tried again later). */
  stopWaitMs?: number;
}

/** The longest rest between polls of a store that keeps failing. */
const STORE_BACKOFF_MAX_MS = 30_000;

export class WebhookDeliverer {
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly backoffMs: (attempt: number) => number;
  private readonly stopWaitMs: number;
  private running: Promise<void> | null = null;
  private stopping = false;
  private abort = new AbortController();
  /** Bumped by every kick: a worker that saw an older value does not go idle. */
  private generation = 0;
  private readonly waiters = new Set<() => void>();
  /** Store failures in a row, over every worker (the first is logged, then one line when it answers again). */
  private storeFailures = 0;
  /** When retries this server scheduled fall due: an idle loop wakes for the soonest, not only at its poll. */
  private retries: number[] = [];

  constructor(private readonly config: WebhookDelivererOptions) {
    this.now = config.now ?? Date.now;
    this.pollMs = config.pollMs ?? 1_000;
    this.concurrency = Math.max(1, config.concurrency ?? 4);
    this.backoffMs = config.backoffMs ?? ((attempt) => webhookBackoffMs(attempt));
    this.stopWaitMs = config.stopWaitMs ?? 5_000;
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.abort = new AbortController();
    const workers = Array.from({ length: this.concurrency }, () => this.work());
    this.running = Promise.all(workers).then(() => undefined);
  }

  /** Looks for due webhooks now (a job just ended). */
  kick(): void {
    this.generation++;
    for (const wake of [...this.waiters]) wake();
  }

  /** Ends the loop; a delivery in flight gets `stopWaitMs`, then is cut off and left to its claim's lapse. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.stopping = true;
    this.kick();
    if (!(await settlesWithin(running, this.stopWaitMs))) {
      this.abort.abort();
      await settlesWithin(running, this.stopWaitMs);
    }
    this.running = null;
  }

  private async work(): Promise<void> {
    while (!this.stopping) {
      const seen = this.generation;
      let busy = false;
      let failed = false;
      try {
        busy = await this.deliverOne();
        if (this.storeFailures > 0) {
          this.config.logger.info({ kind: this.config.kind, failures: this.storeFailures }, 'webhook delivery: the store answers again');
          this.storeFailures = 0;
        }
      } catch (err) {
        // A store error (down, failing over): logged once per outage, then polled with a growing rest, so a
        // store that is down is neither hammered nor logged about several times a second.
        failed = true;
        if (this.storeFailures++ === 0) this.config.logger.error({ err, kind: this.config.kind }, 'webhook delivery: the store failed; trying again with backoff until it answers');
      }
      if (failed && !this.stopping) await this.idle(seen, Math.min(STORE_BACKOFF_MAX_MS, this.pollMs * 2 ** Math.min(this.storeFailures - 1, 10)));
      else if (!busy && !this.stopping) await this.idle(seen);
    }
  }

  /** Waits for a kick, the next retry or a poll interval; `restMs`: exactly that long (a kick still wakes it). */
  private idle(seen: number, restMs?: number): Promise<void> {
    if (this.generation !== seen) return Promise.resolve();
    const soonest = this.retries.length ? Math.min(...this.retries) : Infinity;
    const delay = restMs ?? Math.max(0, Math.min(this.pollMs, soonest - this.now()));
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delay);
      timer.unref();
      this.waiters.add(wake);
    });
  }

  /** Claims and attempts one due webhook; false when none was due. */
  private async deliverOne(): Promise<boolean> {
    const { outbox, options, logger } = this.config;
    const claimAt = this.now();
    const message = await outbox.claim(claimAt, options.timeoutMs + CLAIM_MARGIN_MS);
    // Retries due by now were this claim's to find (or another server's): no longer waited for.
    this.retries = this.retries.filter((at) => at > claimAt);
    if (!message) return false;
    const attempt = message.attempts + 1;
    const result = await this.attempt(message);
    if (!result.ok && this.abort.signal.aborted) return true; // Shutting down: unrecorded; the claim lapses and it is tried again.

    const done = result.ok || attempt >= options.maxAttempts || !message.url;
    const outcome = result.ok
      ? { state: 'delivered' as const, attempts: attempt, nextAt: null }
      : done
        ? { state: 'failed' as const, attempts: attempt, nextAt: null }
        : { state: 'pending' as const, attempts: attempt, nextAt: this.now() + this.backoffMs(attempt) };
    await outbox.attempted(message.id, outcome);
    if (outcome.nextAt !== null) this.retries.push(outcome.nextAt);

    // The URL's query may hold the receiver's own token: it is left out of logs, as the secret and signature are.
    const fields = { [`${this.config.kind ?? 'message'}Id`]: message.id, attempt, status: result.status, url: redactUrl(message.url ?? '') };
    if (result.ok) logger.info(fields, 'webhook delivered');
    else if (outcome.state === 'failed') logger.warn({ ...fields, error: result.error }, 'webhook failed for good');
    else logger.warn({ ...fields, error: result.error, retryAt: new Date(outcome.nextAt!).toISOString() }, 'webhook attempt failed');
    return true;
  }

  private async attempt(message: WebhookMessage): Promise<DeliveryResult> {
    if (!message.url) return { ok: false, error: 'the message has no webhook URL' };
    const { options, secret } = this.config;
    try {
      const body = message.body();
      // Signed afresh each attempt: the timestamp is the attempt's, as receivers check it against their clock.
      const headers = signWebhook(secret, webhookMessageId(message.id), Math.floor(this.now() / 1000), body);
      const event: WebhookAttempt | null = webhookDiagnostics.attempt.hasSubscribers
        ? { instance: this.config.instance ?? '', kind: this.config.kind ?? 'message', id: message.id, url: redactUrl(message.url), attempt: message.attempts + 1, trace: message.trace ?? null, headers: {} }
        : null;
      if (event) webhookDiagnostics.attempt.publish(event);
      const result = await deliverWebhook(message.url, body, event ? { ...event.headers, ...headers } : headers, {
        timeoutMs: options.timeoutMs,
        allowHttp: options.allowHttp,
        allowPrivateNetworks: options.allowPrivateNetworks,
        lookup: this.config.lookup,
        signal: this.abort.signal,
      });
      if (event) {
        event.result = result;
        webhookDiagnostics.attempted.publish(event);
      }
      return result;
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
}

/** True when `promise` settles within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    promise.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(true)),
    );
  });
}
