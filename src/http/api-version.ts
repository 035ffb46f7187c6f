/**
 * @module http/api-version
 * The `Cartesia-Version` a client pins (header, or `cartesia_version` in a
 * WebSocket URL, which wins there). It decides one thing: the shape of HTTP
 * error bodies. From 2026-03-01 on — and when no version is sent — an error
 * is the JSON envelope; a client pinned to an earlier date gets the plain
 * `Title: message` text Cartesia sent then. Any date from 2024-06-10 on is
 * accepted (later dates than any released version too); anything else is
 * 400 `unsupported_version`. Stream error events carry both shapes' fields
 * for every version (`api/cartesia/events.ts`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors/api-error.js';

export const OLDEST_VERSION = '2024-06-10';
/** The first version whose errors are structured JSON. */
export const STRUCTURED_ERRORS_VERSION = '2026-03-01';

export type ErrorShape = 'json' | 'text';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === value;
}

/** The version the client asked for: the query parameter (WebSocket URLs) over the header; null when neither is sent. */
export function requestedVersion(headers: IncomingHttpHeaders, url?: string): string | null {
  if (url !== undefined) {
    const query = url.indexOf('?');
    if (query >= 0) {
      const fromQuery = new URLSearchParams(url.slice(query + 1)).get('cartesia_version');
      if (fromQuery !== null && fromQuery.trim() !== '') return fromQuery.trim();
    }
  }
  const header = headers['cartesia-version'];
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && value.trim() !== '' ? value.trim() : null;
}

/** `unsupported_version` for a version that is not a date from 2024-06-10 on; null when it is fine (or absent). */
export function versionProblem(version: string | null): ApiError | null {
  if (version === null) return null;
  if (isDate(version) && version >= OLDEST_VERSION) return null;
  const shown = version.length > 40 ? `${version.slice(0, 37)}…` : version;
  return new ApiError('unsupported_version', { version: JSON.stringify(shown) });
}

/** The error body shape for a request: plain text only for a valid version before 2026-03-01. */
export function errorShapeFor(headers: IncomingHttpHeaders, url?: string): ErrorShape {
  const version = requestedVersion(headers, url);
  return version !== null && !versionProblem(version) && version < STRUCTURED_ERRORS_VERSION ? 'text' : 'json';
}
