/**
 * @module http/request-id
 * Request ids: `req_` and 96 random bits, on every log line, response
 * header, error body and stream error event.
 */
import { randomBytes } from 'node:crypto';

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}
