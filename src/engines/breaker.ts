/**
 * @module engines/breaker
 * A circuit breaker for one engine (`engines.<id>.breaker`): after
 * `failures` consecutive failures (no healthy server, connection errors,
 * 5xx, 429, no first audio in time) requests skip the engine for `openMs`;
 * then one request probes it (half-open) while the others keep skipping it,
 * and the probe's outcome closes or reopens it. A 429's `Retry-After`
 * delays the probe. It only counts; the synthesis session decides what a
 * skip means (synthesis/fallback).
 */

export interface BreakerSettings {
  failures: number;
  openMs: number;
}

/** 0 closed, 1 open, 2 half-open: as `voicegate_engine_breaker_state` reports it. */
export type BreakerState = 0 | 1 | 2;

export class CircuitBreaker {
  private consecutive = 0;
  private openUntil = 0;
  private state: BreakerState = 0;
  private probing = false;

  constructor(
    readonly engineId: string,
    private readonly settings: BreakerSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The state as of now (an open breaker whose time is up is half-open). */
  get current(): BreakerState {
    if (this.state === 1 && this.now() >= this.openUntil) this.state = 2;
    return this.state;
  }

  /** Whether a request may use the engine now: `probe` is the half-open breaker's single trial. */
  admit(): 'pass' | 'probe' | 'skip' {
    const state = this.current;
    if (state === 0) return 'pass';
    if (state === 2 && !this.probing) {
      this.probing = true;
      return 'probe';
    }
    return 'skip';
  }

  success(): void {
    this.consecutive = 0;
    this.probing = false;
    this.state = 0;
  }

  /** A failure; `retryAfterMs` (a 429's) keeps it open at least that long. */
  failure(retryAfterMs?: number): void {
    this.consecutive++;
    const probeFailed = this.probing;
    this.probing = false;
    if (probeFailed || this.consecutive >= this.settings.failures) {
      this.state = 1;
      this.openUntil = this.now() + Math.max(this.settings.openMs, retryAfterMs ?? 0);
    }
  }

  /** An attempt that proved nothing (the client left, or its request was at fault): a probe may be taken again. */
  neutral(): void {
    this.probing = false;
  }

  info(): { state: 'closed' | 'open' | 'half-open'; failures: number; openUntil: string | null } {
    const state = this.current;
    return { state: (['closed', 'open', 'half-open'] as const)[state], failures: this.consecutive, openUntil: state === 1 ? new Date(this.openUntil).toISOString() : null };
  }
}
