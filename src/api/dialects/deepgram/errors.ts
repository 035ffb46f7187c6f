/**
 * @module api/deepgram/errors
 * Deepgram's error shape for the registry's codes: `{"err_code", "err_msg",
 * "request_id"}` (its legacy shape, which its SDKs and the agent plugins
 * print), with Deepgram's own codes and sentences where its docs give them
 * (`INVALID_AUTH` / `Invalid credentials.`, `UNSUPPORTED_MEDIA_TYPE`,
 * `PAYLOAD_ERROR`, `Payload Too Large`, `Too Many Requests`), and the
 * registry's code and message otherwise. `request_id` is the request's UUID
 * (`dg-request-id`); Voicegate's own id stays in `x-request-id`.
 */
import type { ApiError } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/registry.js';

export interface DeepgramErrorBody {
  err_code: string;
  err_msg: string;
  request_id: string;
}

const AUTH = { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' };
const BUSY = { err_code: 'Too Many Requests', err_msg: 'Please try again later.' };
const UNAVAILABLE = { err_code: 'Service Unavailable', err_msg: 'Please try again later.' };

/** Deepgram's code (and sentence, where it has a fixed one) for a registry code. */
const CODES: Partial<Record<ErrorCode, { err_code: string; err_msg?: string }>> = {
  missing_api_key: AUTH,
  invalid_api_key: AUTH,
  invalid_access_token: AUTH,
  access_token_expired: AUTH,
  key_expired: AUTH,
  insufficient_scope: { err_code: 'INSUFFICIENT_PERMISSIONS', err_msg: 'User does not have sufficient permissions.' },
  model_not_allowed: { err_code: 'INSUFFICIENT_PERMISSIONS', err_msg: 'Project does not have access to the requested model.' },
  network_not_allowed: { err_code: 'INSUFFICIENT_PERMISSIONS' },
  access_token_not_allowed: { err_code: 'INSUFFICIENT_PERMISSIONS' },
  invalid_json: { err_code: 'PAYLOAD_ERROR' },
  payload_too_large: { err_code: 'PAYLOAD_TOO_LARGE' },
  unsupported_media_type: { err_code: 'UNSUPPORTED_MEDIA_TYPE', err_msg: '`Content-Type` header is not supported. `Content-Type` must be `application/json`.' },
  missing_transcript: { err_code: 'Bad Request', err_msg: 'Input text contains no characters.' },
  invalid_output_format: { err_code: 'INVALID_QUERY_PARAMETER' },
  invalid_generation_config: { err_code: 'INVALID_QUERY_PARAMETER' },
  invalid_request: { err_code: 'Bad Request' },
  voice_not_found: { err_code: 'Bad Request', err_msg: 'Bad Request: No such model/version combination found.' },
  model_not_found: { err_code: 'Bad Request', err_msg: 'Bad Request: No such model/version combination found.' },
  rate_limited: BUSY,
  overloaded: BUSY,
  engine_unavailable: UNAVAILABLE,
  model_offline: UNAVAILABLE,
  not_ready: UNAVAILABLE,
  store_unavailable: UNAVAILABLE,
  limits_unavailable: UNAVAILABLE,
};

/** Statuses Deepgram uses where the registry's differ: an unknown model or voice is its 400. */
const STATUS: Partial<Record<ErrorCode, number>> = { model_not_found: 400, voice_not_found: 400 };

/** The status and body of an error; a dialect refusal (`parse.ts` `deepgramFault`) brings its own code and sentence. */
export function deepgramError(error: ApiError, requestId: string, thrown?: unknown): { status: number; body: DeepgramErrorBody } {
  const own = (thrown as { deepgram?: { err_code: string; err_msg: string; status?: number } } | null)?.deepgram;
  if (own) return { status: own.status ?? error.status, body: { err_code: own.err_code, err_msg: own.err_msg, request_id: requestId } };
  const code = CODES[error.code];
  return {
    status: STATUS[error.code] ?? error.status,
    body: { err_code: code?.err_code ?? error.code, err_msg: code?.err_msg ?? error.message, request_id: requestId },
  };
}

/** The sentence of a text over the model's limit, with the limit (`Payload Too Large`, 413). */
export function textTooLong(max: number): { err_code: string; err_msg: string; status: number } {
  return { err_code: 'Payload Too Large', err_msg: `Input text exceeds maximum character limit of ${max}.`, status: 413 };
}
