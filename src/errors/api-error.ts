/**
 * @module errors/api-error
 * `ApiError` carries a registry code and its parameters from wherever a
 * request fails to the transport, which renders it in that transport's
 * envelope (JSON body, SSE error event, OpenAI error shape …).
 */
import { ERRORS, formatMessage, isRetryable, type ErrorCode } from './registry.js';

/** The header Stainless-generated SDKs obey over their own retry rule. */
export const SHOULD_RETRY_HEADER = 'x-should-retry';

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  /** Whether the same request may succeed later (`isRetryable`). */
  readonly retry: boolean;
  /**
   * Response headers for any HTTP rendering: `x-should-retry` from the
   * registry, plus the caller's own (e.g. Retry-After for 429/503).
   */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const def = ERRORS[code];
    super(formatMessage(def.message, params));
    this.name = 'ApiError';
    this.code = code;
    this.status = def.status;
    this.title = def.title;
    this.retry = isRetryable(code);
    this.headers = { [SHOULD_RETRY_HEADER]: String(this.retry), ...headers };
  }

  /** The documented error body: `{error, error_code, title, message, detail, status_code, request_id, doc_url}`. */
  toBody(requestId: string): ErrorBody {
    return {
      error: this.code,
      error_code: this.code,
      title: this.title,
      message: this.message,
      detail: this.message,
      status_code: this.status,
      request_id: requestId,
      doc_url: '',
    };
  }
}

/** The plain-text error of Cartesia versions before 2026-03-01: `Title: message`. */
export function errorText(error: ApiError): string {
  return `${error.title}: ${error.message}`;
}

export interface ErrorBody {
  error: ErrorCode;
  error_code: ErrorCode;
  title: string;
  message: string;
  detail: string;
  status_code: number;
  request_id: string;
  doc_url: string;
}

/** Wraps anything thrown into an ApiError; unknown failures become `generation_failed`. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError('generation_failed');
}
