/**
 * @module store/errors
 * The one client-visible shape of a store failure: 503 `store_unavailable`
 * with `Retry-After: 1`, for a database that cannot be reached, is locked or
 * too slow to answer. Nothing was charged, so the client may simply retry.
 */
import { ApiError } from '../errors/api-error.js';

export function storeUnavailable(cause?: unknown): ApiError {
  const error = new ApiError('store_unavailable', {}, { 'retry-after': '1' });
  if (cause !== undefined) error.cause = cause;
  return error;
}
