/**
 * @module store/postgres/errors
 * Which PostgreSQL failures mean "the database is not there right now" (no
 * connection, a connection lost, a statement or connect timeout, a server
 * shutting down or full) as opposed to a bug or a constraint. Those become
 * 503 `store_unavailable`; everything else is rethrown unchanged.
 */
import { storeUnavailable } from '../errors.js';

/** SQLSTATEs outside class 08 (connection exception) that a retry can cure. */
const RETRYABLE_SQLSTATES = new Set([
  '57014', // query_canceled: statement_timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '55P03', // lock_not_available
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** node-postgres reports its own timeouts and lost connections by message only. */
const DRIVER_MESSAGES = /^timeout expired$|timeout exceeded when trying to connect|Connection terminated|Query read timeout|not queryable|Cannot use a pool after calling end/;

export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') || RETRYABLE_SQLSTATES.has(code) || NETWORK_CODES.has(code)) return true;
  }
  if (err instanceof AggregateError && err.errors.some(isUnavailable)) return true;
  return DRIVER_MESSAGES.test(err.message);
}

/** The error a caller sees: `store_unavailable` for an outage, the original otherwise. */
export function storeError(err: unknown): unknown {
  return isUnavailable(err) ? storeUnavailable(err) : err;
}
