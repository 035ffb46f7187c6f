/**
 * @module api/openai/errors
 * The OpenAI error shape, `{"error": {"message", "type", "param", "code"}}`,
 * for the same registry codes: the OpenAI SDK then sets `err.code`,
 * `err.param` and `err.type`. `param` names the OpenAI field at fault.
 */
import type { ApiError } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/registry.js';

/** The OpenAI request field each code is about. */
const PARAMS: Partial<Record<ErrorCode, string>> = {
  missing_transcript: 'input',
  input_too_long: 'input',
  transcript_too_long: 'input',
  invalid_ssml: 'input',
  dict_not_found: 'pronunciation_dict_id',
  missing_voice: 'voice',
  missing_voice_id: 'voice',
  unknown_voice_mode: 'voice',
  voice_not_found: 'voice',
  model_not_found: 'model',
  invalid_output_format: 'response_format',
  invalid_generation_config: 'speed',
};

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export function openAIError(error: ApiError, param?: string | null): OpenAIErrorBody {
  return { error: { message: error.message, type: errorType(error.status), param: param ?? PARAMS[error.code] ?? null, code: error.code } };
}
