/**
 * @module api/paging
 * Cursor paging in the Cartesia list shape, over a list already in listing
 * order (newest first): `limit`, `starting_after=<id>` (the items after it)
 * and `ending_before=<id>` (the `limit` items just before it, same order).
 * The Cartesia SDK asks for one more page after the last and stops on
 * empty `data`, so a page past the end is `{data: [], has_more: false}`.
 */
import { z } from 'zod';
import { ApiError } from '../../errors/api-error.js';

export const DEFAULT_PAGE_LIMIT = 10;
export const MAX_PAGE_LIMIT = 100;

/** Query values as Fastify parses them: strings, or arrays when a parameter repeats. */
export interface CursorQuery {
  limit?: unknown;
  starting_after?: unknown;
  ending_before?: unknown;
}

export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
}

/**
 * The query of a paged list, for a route's schema: documented by shape, checked by `pageByCursor`
 * (a list's cursors name ids only it knows, so its messages come from there).
 */
export const cursorQuerySchema = z.object({
  limit: z.unknown().optional().meta({ type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT }).describe(`1–${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`),
  starting_after: z.unknown().optional().meta({ type: 'string' }).describe('The page after this id.'),
  ending_before: z.unknown().optional().meta({ type: 'string' }).describe('The page before this id.'),
});

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

function parseLimit(value: unknown): number {
  if (value === undefined || value === null || value === '') return DEFAULT_PAGE_LIMIT;
  const limit = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalid(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}; got ${JSON.stringify(value)}`);
  }
  return limit;
}

function parseCursor(name: string, value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalid(`${name} must be given once, as an id`);
  return value;
}

/**
 * One page of `items` (already in listing order). Throws 400
 * `invalid_request` for a bad `limit`, both cursors at once, or a cursor
 * that names no item of the list.
 */
export function pageByCursor<T extends { id: string }>(items: readonly T[], query: CursorQuery): CursorPage<T> {
  const limit = parseLimit(query.limit);
  const after = parseCursor('starting_after', query.starting_after);
  const before = parseCursor('ending_before', query.ending_before);
  if (after !== null && before !== null) throw invalid('send starting_after or ending_before, not both');
  const cursor = after ?? before;
  if (cursor === null) return { data: items.slice(0, limit), has_more: items.length > limit };
  const index = items.findIndex((item) => item.id === cursor);
  if (index < 0) throw invalid(`${after !== null ? 'starting_after' : 'ending_before'}: no item with id ${cursor}`);
  if (after !== null) {
    const end = index + 1 + limit;
    return { data: items.slice(index + 1, end), has_more: items.length > end };
  }
  const start = Math.max(0, index - limit);
  return { data: items.slice(start, index), has_more: start > 0 };
}
