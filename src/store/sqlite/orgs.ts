/**
 * @module store/sqlite/orgs
 * Organisations in SQLite (`OrgRepository`).
 */
import type { OrgLimits, OrgRepository } from '../store.js';
import { limitValues, toOrg, type OrgRow } from '../account-rows.js';
import { guard, type SqliteContext } from './context.js';

/** An organisation's limits as named parameters of its statements. */
function limitColumns(limits: OrgLimits) {
  const [max_concurrent, rate_requests, rate_per_seconds] = limitValues(limits);
  return { max_concurrent, rate_requests, rate_per_seconds };
}

export function sqliteOrgs({ db, durable }: SqliteContext): OrgRepository {
  const s = {
    orgInsert: db.prepare(
      'INSERT INTO orgs (id, name, created_at, balance, max_concurrent, rate_requests, rate_per_seconds) VALUES (@id, @name, @created_at, 0, @max_concurrent, @rate_requests, @rate_per_seconds)',
    ),
    // One statement, so the check and the insert are one atomic write under SQLite's lock.
    orgInsertFirst: db.prepare(
      'INSERT INTO orgs (id, name, created_at, balance, max_concurrent, rate_requests, rate_per_seconds) SELECT @id, @name, @created_at, 0, @max_concurrent, @rate_requests, @rate_per_seconds WHERE NOT EXISTS (SELECT 1 FROM orgs)',
    ),
    orgGet: db.prepare('SELECT * FROM orgs WHERE id = ?'),
    orgList: db.prepare('SELECT * FROM orgs ORDER BY created_at, id'),
    orgCount: db.prepare('SELECT COUNT(*) AS n FROM orgs'),
    orgLimits: db.prepare('UPDATE orgs SET max_concurrent = @max_concurrent, rate_requests = @rate_requests, rate_per_seconds = @rate_per_seconds WHERE id = @id'),
  };
  return {
    async create(org) {
      await durable(() => s.orgInsert.run({ id: org.id, name: org.name, created_at: new Date().toISOString(), ...limitColumns(org.limits) }));
      return toOrg(s.orgGet.get(org.id) as OrgRow);
    },
    async get(id) {
      const row = s.orgGet.get(id) as OrgRow | undefined;
      return row ? toOrg(row) : null;
    },
    async list() {
      return (s.orgList.all() as OrgRow[]).map(toOrg);
    },
    async setLimits(id, limits) {
      const result = await durable(() => s.orgLimits.run({ id, ...limitColumns(limits) }));
      if (result.changes === 0) return null;
      return toOrg(s.orgGet.get(id) as OrgRow);
    },
    async count() {
      return (s.orgCount.get() as { n: number }).n;
    },
    async createFirst(org) {
      const { changes } = await durable(() => guard(() => s.orgInsertFirst.run({ id: org.id, name: org.name, created_at: new Date().toISOString(), ...limitColumns(org.limits) })));
      return changes === 0 ? null : toOrg(s.orgGet.get(org.id) as OrgRow);
    },
  };
}
