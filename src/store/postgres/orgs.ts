/**
 * @module store/postgres/orgs
 * Organisations in PostgreSQL (`OrgRepository`). The first organisation is
 * made under a transaction lock, so racing first starts make one.
 */
import { limitValues, toOrg, type OrgRow } from '../account-rows.js';
import type { OrgRepository } from '../store.js';
import type { Db } from './db.js';

export function postgresOrgs(db: Db): OrgRepository {
  const { query } = db;
  return {
    async create(org) {
      const [row] = await query<OrgRow<Date>>(
        'INSERT INTO orgs (id, name, max_concurrent, rate_requests, rate_per_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [org.id, org.name, ...limitValues(org.limits)],
      );
      return toOrg(row);
    },
    async get(id) {
      const [row] = await query<OrgRow<Date>>('SELECT * FROM orgs WHERE id = $1', [id]);
      return row ? toOrg(row) : null;
    },
    async list() {
      return (await query<OrgRow<Date>>('SELECT * FROM orgs ORDER BY created_at, id')).map(toOrg);
    },
    async setLimits(id, limits) {
      const [row] = await query<OrgRow<Date>>(
        'UPDATE orgs SET max_concurrent = $2, rate_requests = $3, rate_per_seconds = $4 WHERE id = $1 RETURNING *',
        [id, ...limitValues(limits)],
      );
      return row ? toOrg(row) : null;
    },
    async count() {
      const [row] = await query<{ n: number }>('SELECT COUNT(*) AS n FROM orgs');
      return row.n;
    },
    async createFirst(org) {
      // Under READ COMMITTED two transactions could both see no row; a transaction lock keyed by the schema serialises them.
      return db.tx(async (run) => {
        await run("SELECT pg_advisory_xact_lock(hashtext('voicegate.first-org.' || current_schema()))");
        const [existing] = await run('SELECT 1 FROM orgs LIMIT 1');
        if (existing) return null;
        const [row] = await run<OrgRow<Date>>(
          'INSERT INTO orgs (id, name, max_concurrent, rate_requests, rate_per_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING *',
          [org.id, org.name, ...limitValues(org.limits)],
        );
        return toOrg(row);
      });
    },
  };
}
