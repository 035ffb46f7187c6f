/**
 * @module accounts/budget-period
 * A key budget's periods, on UTC calendar boundaries: a day starts at 00:00
 * UTC, a month on its first day at 00:00 UTC, and `total` never resets (its
 * period starts at the Unix epoch). Every start is a whole hour, so what a
 * key spent in a period is a sum over the hourly usage rollup.
 */
import type { BudgetPeriod } from '../store/store.js';

/** When the period holding `now` (epoch ms) began. */
export function periodStart(period: BudgetPeriod, now: number): Date {
  const at = new Date(now);
  if (period === 'day') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  if (period === 'month') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  return new Date(0);
}

/** When the period holding `now` ends and the next begins; null for `total`. */
export function periodReset(period: BudgetPeriod, now: number): Date | null {
  const at = new Date(now);
  if (period === 'day') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
  if (period === 'month') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return null;
}
