/**
 * @module store/sqlite/alerts
 * Usage alerts in SQLite (`AlertRepository`): the rules, and their events,
 * which are also the outbox their webhooks are delivered from. An event is
 * unique per alert, threshold and period, so it fires once.
 */
import { toAlert, toAlertEvent, type AlertEventRow, type AlertRow } from '../alert-rows.js';
import { checkWhole } from '../checks.js';
import type { AlertRepository } from '../store.js';
import type { SqliteContext } from './context.js';

const json = (value: number[] | null) => (value === null ? null : JSON.stringify(value));

export function sqliteAlerts({ db, durable, flushed }: SqliteContext): AlertRepository {
  const s = {
    insert: db.prepare(
      'INSERT INTO usage_alerts (id, org_id, key_id, url, budget_percent, balance_below, created_at) VALUES (@id, @org_id, @key_id, @url, @budget_percent, @balance_below, @created_at)',
    ),
    get: db.prepare('SELECT * FROM usage_alerts WHERE id = ?'),
    list: db.prepare('SELECT * FROM usage_alerts WHERE org_id = ? ORDER BY created_at, id'),
    deleteEvents: db.prepare('DELETE FROM usage_alert_events WHERE alert_id = ?'),
    delete: db.prepare('DELETE FROM usage_alerts WHERE id = ?'),
    fire: db.prepare(
      `INSERT INTO usage_alert_events (id, alert_id, org_id, threshold, period, body, created_at, next_at)
       VALUES (@id, @alert_id, @org_id, @threshold, @period, @body, @created_at, @now) ON CONFLICT (alert_id, threshold, period) DO NOTHING`,
    ),
    events: db.prepare('SELECT * FROM usage_alert_events WHERE alert_id = ? ORDER BY created_at DESC, id DESC LIMIT ?'),
    due: db.prepare("SELECT id FROM usage_alert_events WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT 1"),
    take: db.prepare('UPDATE usage_alert_events SET next_at = ? WHERE id = ? RETURNING *'),
    attempted: db.prepare('UPDATE usage_alert_events SET state = @state, attempts = @attempts, next_at = @next_at WHERE id = @id'),
    lastCredit: db.prepare("SELECT COALESCE(MAX(id), 0) AS id FROM ledger WHERE org_id = ? AND kind = 'credit'"),
  };
  const remove = db.transaction((id: string) => {
    s.deleteEvents.run(id);
    return s.delete.run(id).changes > 0;
  });
  const claim = db.transaction((now: number, until: number): AlertEventRow | undefined => {
    const due = s.due.get(now) as { id: string } | undefined;
    return due ? (s.take.get(until, due.id) as AlertEventRow) : undefined;
  });
  return {
    async create(alert) {
      await durable(() =>
        s.insert.run({
          id: alert.id,
          org_id: alert.orgId,
          key_id: alert.keyId,
          url: alert.url,
          budget_percent: json(alert.budgetPercent),
          balance_below: json(alert.balanceBelow),
          created_at: alert.createdAt,
        }),
      );
      return toAlert(s.get.get(alert.id) as AlertRow);
    },
    async get(id) {
      const row = s.get.get(id) as AlertRow | undefined;
      return row ? toAlert(row) : null;
    },
    async list(orgId) {
      return (s.list.all(orgId) as AlertRow[]).map(toAlert);
    },
    async delete(id) {
      return durable(() => remove.immediate(id));
    },
    async fire(event, now) {
      checkWhole('now', now);
      const params = { id: event.id, alert_id: event.alertId, org_id: event.orgId, threshold: event.threshold, period: event.period, body: event.body, created_at: event.createdAt, now };
      return (await durable(() => s.fire.run(params))).changes > 0;
    },
    async events(alertId, limit) {
      return (s.events.all(alertId, limit) as AlertEventRow[]).map(toAlertEvent);
    },
    async claim(now, leaseMs) {
      checkWhole('now', now);
      checkWhole('leaseMs', leaseMs, 1);
      const row = claim.immediate(now, now + leaseMs);
      if (!row) return null;
      await flushed();
      return toAlertEvent(row);
    },
    async attempted(id, outcome) {
      await durable(() => s.attempted.run({ id, state: outcome.state, attempts: outcome.attempts, next_at: outcome.nextAt }));
    },
    async lastCredit(orgId) {
      return (s.lastCredit.get(orgId) as { id: number }).id;
    },
  };
}
