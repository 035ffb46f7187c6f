/**
 * @module api/elevenlabs/errors
 * ElevenLabs' error shape for the registry's codes: `{"detail": {"status":
 * "<code>", "message": "…", "request_id": "…"}}`, with ElevenLabs' own names
 * where its clients know them (`needs_authorization` without a key,
 * `invalid_api_key`, `voice_not_found`, `quota_exceeded`, `missing_permissions`,
 * `too_many_concurrent_requests`, `system_busy`) and the registry's code
 * otherwise. A field problem (`parse.ts` `located`) is ElevenLabs' 422
 * validation error, `{"detail": [{"loc", "msg", "type"}]}`, which the SDK
 * raises as its `UnprocessableEntityError`.
 */
import type { ApiError } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/registry.js';

/** ElevenLabs' name for a registry code, where its clients know one. */
const STATUS: Partial<Record<ErrorCode, string>> = {
  missing_api_key: 'needs_authorization',
  invalid_api_key: 'invalid_api_key',
  invalid_access_token: 'invalid_api_key',
  access_token_expired: 'invalid_api_key',
  voice_not_found: 'voice_not_found',
  insufficient_credits: 'quota_exceeded',
  key_budget_exceeded: 'quota_exceeded',
  key_expired: 'invalid_api_key',
  insufficient_scope: 'missing_permissions',
  overloaded: 'too_many_concurrent_requests',
  rate_limited: 'too_many_concurrent_requests',
  engine_unavailable: 'system_busy',
  model_offline: 'system_busy',
};

/** The code a client sees in `detail.status`. */
export function elevenLabsStatus(error: ApiError): string {
  return STATUS[error.code] ?? error.code;
}

export interface ElevenLabsErrorBody {
  detail: { status: string; message: string; request_id: string } | { loc: (string | number)[]; msg: string; type: string }[];
}

/** The HTTP status and body of an error; a located field problem is 422. */
export function elevenLabsError(error: ApiError, requestId: string, loc?: (string | number)[]): { status: number; body: ElevenLabsErrorBody } {
  if (loc && error.status === 400) {
    return { status: 422, body: { detail: [{ loc, msg: error.message, type: error.code === 'missing_transcript' ? 'missing' : 'value_error' }] } };
  }
  return { status: error.status, body: { detail: { status: elevenLabsStatus(error), message: error.message, request_id: requestId } } };
}

/** The dialect's error renderer (`http/errors` `installErrorRenderer`): a located field problem is 422. */
export function renderElevenLabsError(error: ApiError, request: { id: unknown }, thrown: unknown): { status: number; body: ElevenLabsErrorBody } {
  return elevenLabsError(error, String(request.id), (thrown as { loc?: (string | number)[] } | null)?.loc);
}
