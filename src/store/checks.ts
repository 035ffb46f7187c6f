/**
 * @module store/checks
 * Argument checks every store implementation applies the same way, so a
 * programming error fails loudly instead of writing a nonsensical hold.
 */

/** A reservation holds a whole, non-negative number of credits for a positive time. */
export function checkReserveRequest(request: { id: string; orgId: string; credits: number; ttlMs: number }): void {
  if (typeof request.id !== 'string' || request.id === '') throw new RangeError('reservation id must be a non-empty string');
  if (!Number.isSafeInteger(request.credits) || request.credits < 0) throw new RangeError(`reservation credits must be a non-negative integer; got ${request.credits}`);
  if (!Number.isSafeInteger(request.ttlMs) || request.ttlMs < 1) throw new RangeError(`reservation ttlMs must be a positive integer; got ${request.ttlMs}`);
}

/** Job queue times are whole epoch milliseconds, durations and bounds whole numbers of at least `min`. */
export function checkWhole(name: string, value: number, min = 0): void {
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}; got ${value}`);
}
