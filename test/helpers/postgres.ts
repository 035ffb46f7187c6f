/**
 * @module test/helpers/postgres
 * A fresh PostgreSQL schema per test run (random name), dropped afterwards,
 * on the test database (`VOICEGATE_TEST_DATABASE_URL`, default the local
 * `test` database as user `postgres`).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.VOICEGATE_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export function freshSchemaName(): string {
  return `vg_test_${randomBytes(6).toString('hex')}`;
}

/** Runs one statement on the test database outside any store. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}
