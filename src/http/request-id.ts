/**
 * @module http/request-id
 * Request ids: `req_` and 24 lowercase hex digits, on every log line,
 * response header, error body and stream error event. The first 16 digits
 * are random per process (re-drawn every 2^32 ids), the last 8 a counter:
 * unique without asking the system for randomness on every request. The
 * counter is plain on purpose: a request's charge key is its id, and keys
 * that ascend go into the ledger's indexes at one end, where scrambled ones
 * touched a different page each and cost a third of the store's throughput
 * (docs/benchmarks-history.md). An id reveals nothing but its order within its process.
 */
import { randomBytes } from 'node:crypto';

let prefix = '';
let counter = 0;

function reseed(): void {
  prefix = `req_${randomBytes(8).toString('hex')}`;
  counter = 0;
}

export function newRequestId(): string {
  if (counter === 0) reseed();
  const n = counter;
  counter = (counter + 1) >>> 0;
  // Zero-padded, so ids of one prefix sort as they were made.
  return prefix + n.toString(16).padStart(8, '0');
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's own `x-request-id`, when it is safe to log and store; recorded beside the server's id, never used as a key. */
export function clientRequestId(headers: { [name: string]: string | string[] | undefined }): string | null {
  const given = headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : null;
}
