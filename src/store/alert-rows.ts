/**
 * @module store/alert-rows
 * Usage alerts and their events as both stores name their columns, and
 * their mapping to the records of `store.ts`. Lists are JSON text in SQLite
 * and arrays in PostgreSQL; times ISO text or `Date`.
 */
import { iso } from './account-rows.js';
import type { AlertEvent, UsageAlert } from './store.js';

type Time = string | Date;

export interface AlertRow {
  id: string;
  org_id: string;
  key_id: string | null;
  url: string;
  budget_percent: string | number[] | null;
  balance_below: string | (number | string)[] | null;
  created_at: Time;
}

export interface AlertEventRow {
  id: string;
  alert_id: string;
  org_id: string;
  threshold: string;
  period: string;
  body: string;
  created_at: Time;
  state: AlertEvent['state'];
  attempts: number;
  next_at: number | string | null;
}

const numbers = (value: string | (number | string)[] | null): number[] | null =>
  value === null ? null : (typeof value === 'string' ? (JSON.parse(value) as number[]) : value).map(Number);

export function toAlert(row: AlertRow): UsageAlert {
  return {
    id: row.id,
    orgId: row.org_id,
    keyId: row.key_id,
    url: row.url,
    budgetPercent: numbers(row.budget_percent),
    balanceBelow: numbers(row.balance_below),
    createdAt: iso(row.created_at),
  };
}

export function toAlertEvent(row: AlertEventRow): AlertEvent {
  return {
    id: row.id,
    alertId: row.alert_id,
    orgId: row.org_id,
    threshold: row.threshold,
    period: row.period,
    body: row.body,
    createdAt: iso(row.created_at),
    state: row.state,
    attempts: row.attempts,
    nextAt: row.next_at === null ? null : Number(row.next_at),
  };
}
