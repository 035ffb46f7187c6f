/**
 * @module test/store.contract
 * Runs the shared store contract and the job queue contract against every
 * store that ships: SQLite in a
 * fresh temporary file, PostgreSQL in a fresh schema of its own; another
 * server is another store on the same file or schema.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { jobStoreContract } from './helpers/job-store-contract.js';
import { storeContract } from './helpers/store-contract.js';
import type { TimedRow } from './helpers/store-contract/common.js';

const LEDGER_COLUMNS = 'org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason, created_at';
const FAILURE_COLUMNS = 'org_id, key_id, request_id, model, endpoint, code, created_at';

function values(row: TimedRow): { table: string; columns: string; params: unknown[] } {
  if ('entry' in row) {
    const e = row.entry;
    return { table: 'ledger', columns: LEDGER_COLUMNS, params: [e.orgId, e.kind, e.credits, e.keyId, e.requestId, e.chargeKey, e.clientRequestId, e.model, e.endpoint, e.characters, e.reason, row.at] };
  }
  const f = row.failure;
  return { table: 'request_failures', columns: FAILURE_COLUMNS, params: [f.orgId, f.keyId, f.requestId, f.model, f.endpoint, f.code, row.at] };
}

const sqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-store-'));
  const path = join(dir, 'voicegate.sqlite');
  const store = openSqliteStore(path);
  return {
    store,
    another: async () => openSqliteStore(path),
    async insertAt(rows: TimedRow[]) {
      const db = new Database(path);
      try {
        db.transaction(() => {
          for (const row of rows) {
            const { table, columns, params } = values(row);
            db.prepare(`INSERT INTO ${table} (${columns}) VALUES (${params.map(() => '?').join(', ')})`).run(...params);
          }
        })();
      } finally {
        db.close();
      }
    },
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const postgres = async () => {
  const schema = freshSchemaName();
  const options = { url: TEST_DATABASE_URL, schema, poolSize: 10, timeoutMs: 5000 };
  const store = await openPostgresStore(options);
  return {
    store,
    another: () => openPostgresStore(options),
    async insertAt(rows: TimedRow[]) {
      // The write clock's trigger stamps every row with the database's time; it is off for this transaction only.
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query('ALTER TABLE ledger DISABLE TRIGGER ledger_write_clock');
        await client.query('ALTER TABLE request_failures DISABLE TRIGGER request_failures_write_clock');
        for (const row of rows) {
          const { table, columns, params } = values(row);
          await client.query(`INSERT INTO ${table} (${columns}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')})`, params);
        }
        await client.query('ALTER TABLE ledger ENABLE TRIGGER ledger_write_clock');
        await client.query('ALTER TABLE request_failures ENABLE TRIGGER request_failures_write_clock');
        await client.query('COMMIT');
      } finally {
        await client.end();
      }
    },
    async cleanup() {
      await store.close();
      await dropSchema(schema);
    },
  };
};

storeContract('sqlite', sqlite);
storeContract('postgres', postgres);
jobStoreContract('sqlite', sqlite);
jobStoreContract('postgres', postgres);
