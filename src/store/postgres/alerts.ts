/**
 * @module store/postgres/alerts
 * Usage alerts in PostgreSQL (`AlertRepository`): the rules, and their
 * events, which are also the outbox their webhooks are delivered from. An
 * event is unique per alert, threshold and period, so it fires once however
 * many servers race; a claim takes a due one with `FOR UPDATE SKIP LOCKED`.
 */
import { toAlert, toAlertEvent, type AlertEventRow, type AlertRow } from '../alert-rows.js';
import { checkWhole } from '../checks.js';
import type { AlertRepository } from '../store.js';
import type { Db } from './db.js';

const SQL = {
  claim: `UPDATE usage_alert_events SET next_at = $2
    WHERE id = (
      SELECT e.id FROM usage_alert_events e WHERE e.state = 'pending' AND e.next_at <= $1
      ORDER BY e.next_at, e.id LIMIT 1 FOR UPDATE SKIP LOCKED)
    AND state = 'pending' AND next_at <= $1
    RETURNING *`,
};

export function postgresAlerts({ query, tx }: Db): AlertRepository {
  return {
    async create(alert) {
      const [row] = await query<AlertRow>(
        'INSERT INTO usage_alerts (id, org_id, key_id, url, budget_percent, balance_below, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
        [alert.id, alert.orgId, alert.keyId, alert.url, alert.budgetPercent, alert.balanceBelow, alert.createdAt],
      );
      return toAlert(row);
    },
    async get(id) {
      const [row] = await query<AlertRow>('SELECT * FROM usage_alerts WHERE id = $1', [id]);
      return row ? toAlert(row) : null;
    },
    async list(orgId) {
      return (await query<AlertRow>('SELECT * FROM usage_alerts WHERE org_id = $1 ORDER BY created_at, id', [orgId])).map(toAlert);
    },
    async delete(id) {
      return tx(async (run) => {
        await run('DELETE FROM usage_alert_events WHERE alert_id = $1', [id]);
        return (await run('DELETE FROM usage_alerts WHERE id = $1 RETURNING id', [id])).length > 0;
      });
    },
    async fire(event, now) {
      checkWhole('now', now);
      const rows = await query(
        `INSERT INTO usage_alert_events (id, alert_id, org_id, threshold, period, body, created_at, next_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (alert_id, threshold, period) DO NOTHING RETURNING id`,
        [event.id, event.alertId, event.orgId, event.threshold, event.period, event.body, event.createdAt, now],
      );
      return rows.length > 0;
    },
    async events(alertId, limit) {
      return (await query<AlertEventRow>('SELECT * FROM usage_alert_events WHERE alert_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [alertId, limit])).map(
        toAlertEvent,
      );
    },
    async claim(now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      const [row] = await query<AlertEventRow>(SQL.claim, [now, now + leaseMs]);
      return row ? toAlertEvent(row) : null;
    },
    async attempted(id, outcome) {
      await query('UPDATE usage_alert_events SET state = $2, attempts = $3, next_at = $4 WHERE id = $1', [id, outcome.state, outcome.attempts, outcome.nextAt]);
    },
    async lastCredit(orgId) {
      const [row] = await query<{ id: string }>("SELECT COALESCE(MAX(id), 0)::bigint AS id FROM ledger WHERE org_id = $1 AND kind = 'credit'", [orgId]);
      return Number(row.id);
    },
  };
}
