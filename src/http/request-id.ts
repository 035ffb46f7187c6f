/**
 * @module http/request-id
 * Request ids: `req_` and 24 lowercase hex digits, on every log line,
 * response header, error body and stream error event. The first 16 digits
 * are random per process (re-drawn every 2^32 ids), the last 8 a counter
 * run through a bijection of 32-bit integers: unique without asking the
 * system for randomness on every request, and not plainly sequential.
 */
import { randomBytes } from 'node:crypto';

let prefix = '';
let counter = 0;
let mask = 0;

function reseed(): void {
  const bytes = randomBytes(12);
  prefix = `req_${bytes.toString('hex', 0, 8)}`;
  mask = bytes.readUInt32LE(8);
  counter = 0;
}

export function newRequestId(): string {
  if (counter === 0) reseed();
  // Multiplying by an odd constant modulo 2^32 is a bijection, so ids stay unique within a prefix.
  const scrambled = (Math.imul(counter, 0x9e3779b1) ^ mask) >>> 0;
  counter = (counter + 1) >>> 0;
  return prefix + scrambled.toString(16).padStart(8, '0');
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's own `x-request-id`, when it is safe to log and store; recorded beside the server's id, never used as a key. */
export function clientRequestId(headers: { [name: string]: string | string[] | undefined }): string | null {
  const given = headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : null;
}
