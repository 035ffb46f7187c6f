/**
 * @module store/postgres/db
 * The connection pool and the two ways the store talks to it: a single
 * statement, or a transaction. Every connect and statement is bounded
 * (connection timeout, server-side `statement_timeout`, a client-side read
 * timeout a little longer for a network that goes silent), so an outage
 * surfaces as 503 `store_unavailable` within seconds instead of a hang.
 * BIGINT columns come back as JS numbers (credits are safe integers).
 */
import pg from 'pg';
import { isUnavailable, storeError } from './errors.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database?…` */
  url: string;
  /** Tables live in this schema (created when missing); null: the server's default `search_path`. */
  schema: string | null;
  poolSize: number;
  /** Longest wait for a connection, and for any one statement. */
  timeoutMs: number;
  /** The least spare each share keeps for an outage (`accounts.outageShareCredits`); null or absent: sized from recent grants. */
  outageShareCredits?: number | null;
}

export type Run = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

export interface Db {
  readonly query: Run;
  /** Runs `work` inside BEGIN … COMMIT on one connection; rolls back when it throws. */
  tx<T>(work: (run: Run) => Promise<T>): Promise<T>;
  end(): Promise<void>;
}

const INT8 = pg.types.builtins.INT8;
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === INT8 && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)),
} as pg.CustomTypesConfig;

/** The URL with `-c search_path=<schema>` added to whatever `options` it carries already. */
export function withSearchPath(url: string, schema: string | null): string {
  if (schema === null) return url;
  const parsed = new URL(url);
  const own = parsed.searchParams.get('options');
  parsed.searchParams.set('options', [own, `-c search_path=${schema}`].filter(Boolean).join(' '));
  return parsed.toString();
}

/** Settings shared by the pool and the migration connection. */
export function clientConfig(options: PostgresOptions): pg.ClientConfig {
  return {
    connectionString: withSearchPath(options.url, options.schema),
    connectionTimeoutMillis: options.timeoutMs,
    statement_timeout: options.timeoutMs,
    query_timeout: options.timeoutMs + 1000,
    // A client that stalls mid-transaction must not hold an organisation's row lock for long.
    idle_in_transaction_session_timeout: options.timeoutMs * 2,
    application_name: 'voicegate',
    types,
  };
}

function runner(client: pg.Pool | pg.PoolClient): Run {
  return async <R>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as R[];
}

export function openDb(options: PostgresOptions): Db {
  const pool = new pg.Pool({ ...clientConfig(options), max: options.poolSize });
  // An idle connection that dies emits here; the next statement reports the outage to its caller.
  pool.on('error', () => {});
  const direct = runner(pool);
  return {
    async query(sql, params) {
      try {
        return await direct(sql, params);
      } catch (err) {
        throw storeError(err);
      }
    },
    async tx(work) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw storeError(err);
      }
      // A connection that failed, timed out or could not roll back is in an unknown state: discard it.
      let discard: Error | undefined;
      // A connection that dies between this transaction's statements (the server restarted) emits
      // 'error' on the checked-out client, which the pool does not listen to then; unheard, it
      // would end the process. The statement in progress or the next one fails with the outage.
      const lost = (err: Error) => (discard = err);
      client.on('error', lost);
      try {
        await client.query('BEGIN');
        const result = await work(runner(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        if (isUnavailable(err)) discard = err as Error;
        else
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            discard = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          });
        throw storeError(err);
      } finally {
        client.off('error', lost);
        client.release(discard);
      }
    },
    end: () => pool.end(),
  };
}
