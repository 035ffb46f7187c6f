/** @module errors/api-error.test — the retry rule and how an ApiError renders it as a header. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ApiError, SHOULD_RETRY_HEADER } from './api-error.js';
import { ERRORS, isRetryable, type ErrorCode } from './registry.js';

it('retries 429 and 5xx, not other 4xx; request_timeout is the exception', () => {
  const retryable = (Object.keys(ERRORS) as ErrorCode[]).filter(isRetryable);
  for (const code of retryable) assert.ok(ERRORS[code].status === 429 || ERRORS[code].status >= 500 || code === 'request_timeout', code);
  for (const code of ['voice_profile_missing', 'context_expired', 'invalid_json', 'url_too_long', 'insufficient_credits'] as const) assert.equal(isRetryable(code), false, code);
  for (const code of ['rate_limited', 'overloaded', 'engine_unavailable', 'store_unavailable', 'engine_error', 'request_timeout'] as const) assert.equal(isRetryable(code), true, code);
});

it('puts x-should-retry in the headers beside the caller’s own', () => {
  const busy = new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
  assert.equal(busy.retry, true);
  assert.deepEqual(busy.headers, { [SHOULD_RETRY_HEADER]: 'true', 'retry-after': '1' });
  const conflict = new ApiError('voice_profile_missing', { voice: 'v', model: 'm', engine: 'espeak' });
  assert.deepEqual(conflict.headers, { 'x-should-retry': 'false' });
});
