/**
 * @module errors/registry
 * The one registry of error codes a client can see: code → HTTP status, title,
 * message template and whether a retry can help. `docs/errors.md` documents
 * the same table and a test keeps the two in step, so adding a code here
 * means documenting it there.
 */

export interface ErrorDefinition {
  /** HTTP status sent with the error (and `status_code` in stream error events). */
  readonly status: number;
  /** Short human title, as the Cartesia SDK's error type expects. */
  readonly title: string;
  /** Message template; `{name}` placeholders are filled from the error's params. */
  readonly message: string;
  /**
   * Whether sending the same request again can succeed. Omitted, it follows
   * from the status (see `isRetryable`); set it only where a code breaks
   * that rule.
   */
  readonly retry?: boolean;
}

export const ERRORS = {
  invalid_json: { status: 400, title: 'Invalid JSON', message: 'request body must be a JSON object{reason}' },
  invalid_request: { status: 400, title: 'Invalid request', message: '{reason}' },
  missing_transcript: { status: 400, title: 'Missing transcript', message: 'transcript is required and must be a non-empty string with something to speak' },
  empty_dialogue_turn: { status: 400, title: 'Empty dialogue turn', message: 'inputs[{index}] has nothing to speak: every turn of a dialogue needs text' },
  too_many_dialogue_turns: { status: 400, title: 'Too many dialogue turns', message: 'the dialogue has {count} inputs; the maximum is {max} per request — split it, or submit it as a job' },
  input_too_long: {
    status: 400,
    title: 'Input too long',
    message: 'transcript is {count} characters; the maximum is {max} per request — split longer text across requests or WebSocket messages',
  },
  transcript_too_long: {
    status: 400,
    title: 'Transcript too long',
    message: 'the transcript is {count} characters after pronunciation dictionary expansion; the maximum is {max}',
  },
  invalid_tag: { status: 400, title: 'Invalid tag', message: 'the transcript tag {tag} cannot be read: {reason}' },
  invalid_ssml: { status: 400, title: 'Invalid SSML', message: 'the SSML cannot be read at line {line}, column {column}: {reason}' },
  unsupported_version: {
    status: 400,
    title: 'Unsupported version',
    message: 'Cartesia-Version {version} is not supported: send a date (YYYY-MM-DD) from 2024-06-10 on, e.g. 2026-03-01',
  },
  missing_voice: { status: 400, title: 'Missing voice', message: 'voice is required: send "<voice-id>" or {"mode": "id", "id": "<voice-id>"}{reason}' },
  missing_voice_id: { status: 400, title: 'Missing voice id', message: 'voice.id is required and must be a non-empty string' },
  unknown_voice_mode: { status: 400, title: 'Unknown voice mode', message: 'voice.mode must be "id"{reason}' },
  voice_not_found: { status: 404, title: 'Voice not found', message: 'voice {id} does not exist or is not visible to your organization' },
  voice_profile_missing: {
    status: 409,
    title: 'Voice profile missing',
    message:
      'voice {voice} is not prepared for model {model}, which the {engine} engine serves; use a voice with a profile for that engine, or a model bound to a cloning-capable engine',
  },
  voice_mix_unsupported: {
    status: 400,
    title: 'Voice mix unsupported',
    message: 'voice {voice} cannot be mixed on model {model}: the {engine} engine that serves it does not mix voices; mix voices of a model served by eSpeak NG or a Kokoro model',
  },
  voice_transcript_missing: {
    status: 409,
    title: 'Voice transcript missing',
    message:
      'voice {voice} has no transcript of its clip, which the {engine} engine serving model {model} needs to clone it; add one with PATCH /voices/{voice} {"transcript": "…"}',
  },
  voice_not_editable: { status: 403, title: 'Voice not editable', message: 'voice {id} is a built-in voice and cannot be changed or deleted' },
  invalid_audio: { status: 400, title: 'Invalid audio', message: '{reason}' },
  model_not_found: { status: 404, title: 'Model not found', message: '{reason}' },
  model_import_invalid: { status: 400, title: 'Model import refused', message: '{reason}; nothing was installed' },
  model_import_too_large: { status: 413, title: 'Model import too large', message: '{reason}; nothing was installed' },
  model_exists: { status: 409, title: 'Model exists', message: 'model {id} already exists; delete it first (DELETE /admin/models/{id}) or import under another id' },
  model_not_removable: { status: 409, title: 'Model not removable', message: 'model {id} is {what}: only imported models can be deleted; remove it from the configuration instead' },
  job_not_found: { status: 404, title: 'Job not found', message: 'job {id} does not exist' },
  invalid_caption_format: { status: 400, title: 'Invalid caption format', message: 'format must be vtt or srt; got {format}' },
  invalid_caption_options: { status: 400, title: 'Invalid caption options', message: 'captions: {reason}' },
  job_not_finished: { status: 409, title: 'Job not finished', message: 'job {id} is {status}; its audio exists once it has succeeded' },
  job_too_long: { status: 400, title: 'Job too long', message: 'the job is {count} characters; the maximum is {max} per job' },
  too_many_jobs: { status: 429, title: 'Too many jobs', message: 'the organisation has {count} jobs queued or running; the maximum is {max} — wait for some to finish' },
  invalid_webhook_url: { status: 400, title: 'Invalid webhook URL', message: 'webhook_url cannot be used: {reason}' },
  dict_not_found: { status: 404, title: 'Dictionary not found', message: 'pronunciation dictionary {id} does not exist' },
  invalid_output_format: { status: 400, title: 'Invalid output format', message: '{reason}' },
  invalid_generation_config: { status: 400, title: 'Invalid generation config', message: '{reason}' },
  payload_too_large: { status: 413, title: 'Payload too large', message: 'request body is larger than the limit of {limit} bytes' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', message: '{reason}' },
  headers_too_large: { status: 431, title: 'Headers too large', message: 'the request headers are larger than the limit of {limit} bytes' },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    message: "the request's headers or body did not arrive within the server's time limit; send it again",
    retry: true,
  },
  method_not_allowed: { status: 405, title: 'Method not allowed', message: '{method} is not allowed on {path}; use {allowed}' },
  not_found: { status: 404, title: 'Not found', message: 'no route for {method} {path}' },
  engine_error: { status: 502, title: 'Engine error', message: 'the speech engine failed while generating this request{reason}' },
  engine_unavailable: { status: 503, title: 'Engine unavailable', message: 'the speech engine is busy or not ready; retry later' },
  model_offline: {
    status: 503,
    title: 'Model offline',
    message: 'no healthy inference server is serving model {model} right now; retry later',
  },
  upstream_unavailable: {
    status: 502,
    title: 'Upstream unavailable',
    message: 'the inference server for model {model} could not be reached ({reason})',
  },
  upstream_error: { status: 502, title: 'Upstream error', message: 'the inference server for model {model} failed: {reason}' },
  upstream_timeout: { status: 504, title: 'Upstream timeout', message: 'generation for model {model} took longer than {seconds} s' },
  engine_timeout: { status: 504, title: 'Engine timeout', message: 'the speech engine did not finish within {seconds} s{reason}' },
  store_unavailable: {
    status: 503,
    title: 'Store unavailable',
    message: 'the account database could not be reached; nothing was charged — retry later',
  },
  limits_unavailable: {
    status: 503,
    title: 'Limits unavailable',
    message: 'the shared limit counters could not be reached; nothing was charged — retry later',
  },
  cache_unavailable: {
    status: 503,
    title: 'Cache unavailable',
    message: "the shared audio cache (Redis) could not be reached; this server's own entries were purged — retry to purge the shared ones",
  },
  storage_unavailable: {
    status: 503,
    title: 'Storage unavailable',
    message: "the jobs' storage (a bucket or shared folder) could not be reached; the job and its audio are kept — retry later",
  },
  url_too_long: { status: 414, title: 'URL too long', message: 'a path segment is longer than {max} characters' },
  generation_failed: { status: 500, title: 'Generation failed', message: 'generation failed for an unexpected reason; the request id helps the operator find it' },
  missing_api_key: {
    status: 401,
    title: 'Missing API key',
    message: 'an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>',
  },
  invalid_api_key: { status: 401, title: 'Invalid API key', message: 'the API key is not valid or has been revoked' },
  invalid_access_token: {
    status: 401,
    title: 'Invalid access token',
    message: 'the access token is not valid, or the API key it was made from has been revoked',
  },
  access_token_expired: { status: 401, title: 'Access token expired', message: 'the access token has expired; make a new one with POST /access-token' },
  key_expired: { status: 401, title: 'API key expired', message: 'the API key expired at {expiresAt}' },
  insufficient_scope: { status: 403, title: 'Insufficient scope', message: 'this API key lacks the {scope} scope this route needs' },
  model_not_allowed: { status: 403, title: 'Model not allowed', message: 'this API key may not use model {model}; it may use {allowed}' },
  network_not_allowed: { status: 403, title: 'Network not allowed', message: 'this API key may not be used from {address}' },
  access_token_not_allowed: {
    status: 403,
    title: 'Access token not allowed',
    message: 'access tokens are good for TTS and for reading models and voices only; use an API key for this route',
  },
  insufficient_credits: {
    status: 402,
    title: 'Insufficient credits',
    message: 'your organization has no credits left (balance {balance}); add credits to continue',
  },
  key_budget_exceeded: {
    status: 402,
    title: 'Key budget exceeded',
    message: 'this API key has used its {period} budget of {credits} credits ({spent} spent, {held} held by requests under way); {resets}',
  },
  overloaded: { status: 429, title: 'Overloaded', message: 'too many active streams; retry later' },
  rate_limited: { status: 429, title: 'Rate limited', message: 'too many requests for this API key; retry after {retryAfter} s' },
  admin_disabled: { status: 403, title: 'Admin API disabled', message: 'the admin API is off: set VOICEGATE_ADMIN_TOKEN to enable it' },
  invalid_admin_token: { status: 401, title: 'Invalid admin token', message: 'this route needs Authorization: Bearer <admin token>' },
  metrics_protected: {
    status: 403,
    title: 'Metrics protected',
    message: 'metrics on this port need the admin token: set VOICEGATE_ADMIN_TOKEN, or make them public (VOICEGATE_METRICS_PUBLIC=on) or give them a port of their own (VOICEGATE_METRICS_PORT)',
  },
  org_not_found: { status: 404, title: 'Organization not found', message: 'organization {id} does not exist' },
  key_not_found: { status: 404, title: 'API key not found', message: 'API key {id} does not exist' },
  alert_not_found: { status: 404, title: 'Alert not found', message: 'usage alert {id} does not exist' },
  invalid_message: { status: 400, title: 'Invalid message', message: '{reason}' },
  context_not_found: { status: 404, title: 'Context not found', message: 'context {id} is not open on this connection' },
  context_expired: {
    status: 408,
    title: 'Context expired',
    message: 'context {id} was open for more than {seconds} s; start a new context',
  },
  too_many_contexts: {
    status: 429,
    title: 'Too many contexts',
    message: 'this connection already has {max} open contexts; finish or cancel one first',
  },
  too_many_connections: {
    status: 503,
    title: 'Too many connections',
    message: 'the Wyoming listener already has {max} connections open; retry later',
  },
  not_ready: { status: 503, title: 'Not ready', message: 'the server is starting or shutting down; retry later' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

/** Fills `{name}` placeholders; unknown names become empty strings. */
export function formatMessage(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    return value === undefined || value === null ? '' : String(value);
  });
}

/**
 * Whether a retry of the same request can succeed: by default 429 (come back
 * later) and 5xx (a failure on this side), never another 4xx, which the
 * request itself causes. The Stainless-generated SDKs (Cartesia, OpenAI)
 * read this as `x-should-retry` and otherwise also retry 408 and 409.
 */
export function isRetryable(code: ErrorCode): boolean {
  const def: ErrorDefinition = ERRORS[code];
  return def.retry ?? (def.status === 429 || def.status >= 500);
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERRORS, code);
}
