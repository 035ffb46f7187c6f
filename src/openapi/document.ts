/**
 * @module openapi/document
 * The OpenAPI 3.1 document of this server: every route of the four HTTP
 * dialects (native, OpenAI, ElevenLabs, Deepgram) and the rest: the operations generated from
 * the routes' own schemas (`generate.ts`), and a table here for the routes not declaring theirs yet, with the zod schemas of `schemas.ts` as JSON Schema (zod's output),
 * the error envelope with every registry code (one response per status,
 * naming the codes sent with it), the cost and retry headers, and the
 * stream event shapes. It follows the configuration: the account routes
 * appear when accounts are on, `/metrics` when it is served on this port.
 */
import { z } from 'zod';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { operationId } from './generate.js';
import { components } from './schemas.js';

export interface DocumentOptions {
  version: string;
  /** Accounts on: API keys, `/usage`, the admin API. */
  accounts: boolean;
  /** `/metrics` is served on the main port (not on a port of its own, not turned off). */
  metricsOnMainPort: boolean;
  /** Cost headers repeated under this prefix too. */
  costHeaderAliasPrefix: string | null;
  /** Long-form jobs are served (`jobs.enabled`). */
  jobs?: boolean;
}

type Json = Record<string, unknown>;

const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });
const binary: Json = { type: 'string', format: 'binary' };

/** A JSON Schema of a zod schema that references no component. */
function inline(schema: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as Json;
  return rest;
}

function componentSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(components, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' });
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

/** Statuses of the registry, each with the codes sent with it. */
function codesByStatus(): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, def] of Object.entries(ERRORS) as [ErrorCode, { status: number }][]) {
    byStatus.set(def.status, [...(byStatus.get(def.status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

const ERROR_HEADERS = { 'x-request-id': { $ref: '#/components/headers/RequestId' }, 'x-should-retry': { $ref: '#/components/headers/ShouldRetry' } };

function errorResponses(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [status, codes] of codesByStatus()) {
    const description = `Error codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`;
    const headers = { ...ERROR_HEADERS, ...(status === 429 || status === 503 ? { 'retry-after': { $ref: '#/components/headers/RetryAfter' } } : {}) };
    out[`Error${status}`] = {
      description: `${description} A client pinned to a \`Cartesia-Version\` before 2026-03-01 gets the plain text \`Title: message\` instead.`,
      headers,
      content: { ...json(ref('ErrorBody')), 'text/plain': { schema: { type: 'string', description: '`Title: message`, for a `Cartesia-Version` before 2026-03-01.' } } },
    };
    out[`OpenAIError${status}`] = { description, headers, content: json(ref('OpenAIError')) };
    out[`DeepgramError${status}`] = { description: `${description} In Deepgram’s shape \`{err_code, err_msg, request_id}\`; an unknown model or voice is 400.`, headers, content: json(ref('DeepgramError')) };
    out[`ElevenLabsError${status}`] = {
      description: `${description} In ElevenLabs' shape; a field problem is answered 422 with a list of \`{loc, msg, type}\`.`,
      headers,
      content: json(ref('ElevenLabsError')),
    };
  }
  out.ElevenLabsValidation = {
    description: 'A field is missing or not valid: `{"detail": [{loc, msg, type}]}`, `loc` naming where it stands (`["body", "voice_settings", "stability"]`).',
    headers: ERROR_HEADERS,
    content: json(ref('ElevenLabsError')),
  };
  return out;
}

/** The error responses of an operation: the statuses it can answer with (the registry's envelope). */
function errors(statuses: number[], dialect: 'cartesia' | 'openai' | 'elevenlabs' | 'deepgram' = 'cartesia'): Record<string, Json> {
  const known = codesByStatus();
  const prefix = dialect === 'openai' ? 'OpenAIError' : dialect === 'elevenlabs' ? 'ElevenLabsError' : dialect === 'deepgram' ? 'DeepgramError' : 'Error';
  const out: Record<string, Json> = {};
  for (const status of statuses) {
    if (!known.has(status)) throw new Error(`no registry code has status ${status}`);
    out[String(status)] = { $ref: `#/components/responses/${prefix}${status}` };
  }
  if (dialect === 'elevenlabs' && statuses.includes(400)) out['422'] = { $ref: '#/components/responses/ElevenLabsValidation' };
  return out;
}

const COST = {
  'x-request-cost-usd': { $ref: '#/components/headers/RequestCostUsd' },
  'x-request-credits': { $ref: '#/components/headers/RequestCredits' },
  'x-credits-remaining-usd': { $ref: '#/components/headers/CreditsRemainingUsd' },
  'x-credits-remaining': { $ref: '#/components/headers/CreditsRemaining' },
};

function headerComponents(prefix: string | null): Record<string, Json> {
  const alias = prefix ? ` Repeated as \`${prefix}…\` (\`accounts.costHeaderAliasPrefix\`).` : '';
  const decimal = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' };
  return {
    RequestId: { description: 'The server’s id of the request (`req_` and 24 hex digits).', schema: { type: 'string' } },
    ShouldRetry: { description: 'Whether the same request may succeed if sent again.', schema: { type: 'string', enum: ['true', 'false'] } },
    RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'string' } },
    VoicegateModel: { description: 'The model that served: the one asked for, or after a fall-over the model of its fallback chain that made the audio (and set its price).', schema: { type: 'string' } },
    RequestCostUsd: { description: `What this request cost, in USD.${alias}`, schema: decimal },
    RequestCredits: { description: `What this request cost, in credits.${alias}`, schema: { type: 'string', pattern: '^\\d+$' } },
    CreditsRemainingUsd: { description: `The organisation’s balance after this request, in USD.${alias}`, schema: decimal },
    CreditsRemaining: { description: `The organisation’s balance after this request, in credits.${alias}`, schema: { type: 'string', pattern: '^-?\\d+$' } },
  };
}

interface Operation {
  tag: string;
  summary: string;
  description?: string;
  auth?: 'key' | 'admin' | 'none';
  /** An access token (`POST /access-token`) is accepted as well as an API key. */
  token?: boolean;
  parameters?: Json[];
  body?: Json;
  responses: Record<string, Json>;
  extra?: Json;
}

const TTS_ERRORS = [400, 401, 402, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504];
const KEY_ERRORS = [401, 403, 429, 503];

function queryParam(name: string, schema: z.ZodType, description: string): Json {
  return { name, in: 'query', required: false, description, schema: inline(schema) };
}

const voicePathParam: Json = { name: 'voice_id', in: 'path', required: true, description: 'A voice id, or an ElevenLabs voice id mapped by `elevenlabs.voiceAliases`.', schema: inline(z.string().max(256)) };
const elevenLabsFormat = queryParam(
  'output_format',
  z.string(),
  '`mp3_22050_32`, `mp3_44100_{32,64,96,128,192}` (default `mp3_44100_128`), `pcm_{8000,16000,22050,24000,44100,48000}`, `ulaw_8000`, `alaw_8000`, `opus_48000_{32,64,96,128,192}`, `wav_<rate>`.',
);

/** ElevenLabs' routes not declaring their schema yet: its WebSockets, voices, models and the subscription. */
function elevenLabsPaths(): Record<string, Record<string, Operation>> {
  const socket = (summary: string, description: string): Record<string, Operation> => ({
    get: {
      tag: 'ElevenLabs',
      summary,
      token: true,
      description,
      auth: 'key',
      parameters: [
        voicePathParam,
        queryParam('model_id', z.string(), 'A model id or an ElevenLabs model id (`elevenlabs.modelAliases`).'),
        elevenLabsFormat,
        queryParam('language_code', z.string(), 'The language.'),
        queryParam('auto_mode', z.enum(['true', 'false']), 'Speak what arrives at once.'),
        queryParam('inactivity_timeout', z.int().min(1).max(180), 'Seconds without text before the socket closes (default 20).'),
        queryParam('apply_text_normalization', z.enum(['auto', 'on', 'off']), '`off` turns the normaliser off.'),
        queryParam('sync_alignment', z.enum(['true', 'false']), 'true: every audio message carries the alignment of the characters that start in it; none comes without audio.'),
        queryParam('enable_ssml_parsing', z.enum(['true', 'false']), 'Accepted.'),
      ],
      responses: { '101': { description: 'Switching to the WebSocket protocol.' }, ...errors([400, 401, 404, 503], 'elevenlabs') },
    },
  });
  return {
    '/v1/text-to-speech/{voice_id}/stream-input': socket(
      'WebSocket: streamed text in, audio and alignment out (ElevenLabs-compatible)',
      'One context: `{"text": " "}` with `voice_settings` and `generation_config` opens it, text messages feed it, `{"text": ""}` ends it; `{audio, alignment, normalizedAlignment}` messages, then `{"isFinal": true}` and a 1000 close. The key may come in the first message as `xi_api_key`.',
    ),
    '/v1/text-to-speech/{voice_id}/multi-stream-input': socket(
      'WebSocket: several contexts (ElevenLabs-compatible)',
      'Every message carries `context_id`; `close_context` ends one (what was queued is spoken, then `isFinal`), `close_socket` all. `{"text": ""}` without `flush` keeps the connection alive.',
    ),
  };
}

/** Deepgram's Aura WebSocket, `GET /v1/speak` (its `POST` is declared on its route). */
function deepgramPaths(): Record<string, Record<string, Operation>> {
  const model = queryParam('model', z.string(), 'An Aura name mapped by `deepgram.models`, or `aura-2-<voice_id>-<lang>` for any voice; absent: `aura-asteria-en`.');
  const encoding = queryParam('encoding', z.enum(['linear16', 'mulaw', 'alaw']), 'Deepgram’s encoding (default linear16).');
  const sampleRate = queryParam('sample_rate', z.int(), 'linear16: 8000, 16000, 24000, 32000, 48000; mulaw/alaw: 8000, 16000; mp3 22050 and opus 48000 fixed.');
  const speed = queryParam('speed', z.number(), 'The speaking rate, within the mapped model’s range.');
  return {
    '/v1/speak': {
      get: {
        tag: 'Deepgram',
        summary: 'WebSocket: streamed text in, audio out (Deepgram-compatible)',
        description:
          '`Metadata` first; `{"type":"Speak","text"}` queues text (a sentence is spoken once complete), `Flush` is answered by `Flushed {sequence_id}` after its audio, `Clear` by `Cleared` (what was not yet spoken is dropped and not charged), `Close` speaks the rest and closes 1000. Audio is binary frames. The key as `Authorization: Token` or the subprotocols `token, <key>` / `bearer, <token>`.',
        auth: 'key',
        token: true,
        parameters: [model, encoding, sampleRate, speed],
        responses: { '101': { description: 'Switching to the WebSocket protocol (the subprotocol `token` or `bearer` echoed when offered).' }, ...errors([400, 401, 403, 429, 503], 'deepgram') },
      },
    },
  };
}

const cursorParams = [
  queryParam('limit', z.int().min(1).max(100), '1–100 (default 10).'),
  queryParam('starting_after', z.string(), 'The page after this id.'),
  queryParam('ending_before', z.string(), 'The page before this id.'),
];

function ok(description: string, schemaId?: string, headers?: Json): Json {
  return { description, ...(headers ? { headers } : {}), ...(schemaId ? { content: json(ref(schemaId)) } : {}) };
}

function operations(options: DocumentOptions): Record<string, Record<string, Operation>> {
  // What OpenAI's endpoint can answer; Voicegate's own also Ogg Opus, where a model allows it.
  const openAIAudio = { 'audio/wav': { schema: binary }, 'audio/mpeg': { schema: binary }, 'application/octet-stream': { schema: binary } };
  const audio = { ...openAIAudio, 'audio/ogg': { schema: binary } };
  // Without accounts nothing is charged, and no cost headers are sent.
  const COST_HEADERS = options.accounts ? COST : undefined;
  const paths: Record<string, Record<string, Operation>> = {
    '/tts/websocket': {
      get: {
        tag: 'Speech',
        summary: 'WebSocket: contexts, streamed input, flush and cancel',
        token: true,
        description:
          'Upgrade on the same host and port (`wss://` with TLS). Client messages are `WebSocketRequest`s, server messages `WebSocketEvent`s, all JSON text frames. A refused upgrade is an HTTP error with the error envelope.',
        auth: 'key',
        parameters: [
          queryParam('api_key', z.string(), 'The API key, for clients that cannot set headers.'),
          queryParam('access_token', z.string(), 'Same as `api_key`.'),
          queryParam('cartesia_version', z.string(), 'A `Cartesia-Version` date (from 2024-06-10); wins over the header.'),
        ],
        responses: { '101': { description: 'Switching to the WebSocket protocol.' }, ...errors([400, 401, 404, 503]) },
        extra: { 'x-client-message': ref('WebSocketRequest'), 'x-server-message': ref('WebSocketEvent') },
      },
    },
    ...elevenLabsPaths(),
    ...deepgramPaths(),
  };
  return paths;
}

/**
 * The document: the operations `generated` from the routes' own schemas (`generate.ts`), and, for
 * the routes that do not declare theirs yet, the table above.
 */
export function buildOpenApiDocument(options: DocumentOptions, generated: Record<string, Json> = {}): Json {
  const keySecurity = options.accounts ? [{ bearerKey: [] }, { headerKey: [] }] : [];
  const paths: Record<string, Json> = {};
  for (const [path, methods] of Object.entries(operations(options))) {
    const item: Json = {};
    for (const [method, op] of Object.entries(methods)) {
      let security: Json[] = [];
      if (op.auth === 'admin') security = [{ adminToken: [] }];
      else if (op.auth === 'key' && options.accounts) {
        // Each dialect's own credential beside the two every route takes.
        const own = path === '/tts/websocket' ? [{ queryKey: [] }] : path === '/v1/models' ? [{ xiApiKey: [] }, { deepgramToken: [] }] : op.tag === 'ElevenLabs' ? [{ xiApiKey: [] }] : op.tag === 'Deepgram' ? [{ deepgramToken: [] }] : [];
        security = [...keySecurity, ...own];
      }
      const responses: Record<string, Json> = {};
      for (const [status, response] of Object.entries(op.responses)) {
        responses[status] = '$ref' in response ? response : { ...response, headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' }, ...(response.headers as Json | undefined) } };
      }
      const description = [op.description, op.token && options.accounts ? 'An access token from `POST /access-token` is accepted in place of an API key.' : undefined].filter(Boolean).join(' ');
      item[method] = {
        operationId: operationId(method, path),
        tags: [op.tag],
        summary: op.summary,
        ...(description ? { description } : {}),
        ...(op.parameters ? { parameters: op.parameters } : {}),
        ...(op.body ? { requestBody: op.body } : {}),
        responses,
        security,
        ...op.extra,
      };
    }
    paths[path] = item;
  }
  for (const [path, item] of Object.entries(generated)) paths[path] = { ...paths[path], ...item };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voicegate',
      version: options.version,
      summary: 'A self-hostable text-to-speech API: the Cartesia dialect and an OpenAI-compatible one.',
      description: [
        'Errors use one envelope (`ErrorBody`; OpenAI’s shape on `/v1/audio/speech`) with the codes of the registry, and every HTTP error carries `x-should-retry`. A `Cartesia-Version` header (any date from 2024-06-10) before 2026-03-01 gets them as plain `Title: message` text, as Cartesia sent then.',
        options.accounts
          ? 'Send an API key as `Authorization: Bearer <key>` or `X-API-Key`; the admin routes and `/metrics` take the admin token instead.'
          : 'Accounts are off on this server: no key is needed and nothing is charged.',
        ...(options.accounts ? ['Successful synthesis responses carry the cost headers.'] : []),
      ].join(' '),
    },
    tags: [
      { name: 'Speech', description: 'The Cartesia dialect: `/tts/bytes`, `/tts/sse`, `/tts/websocket`.' },
      { name: 'OpenAI', description: 'The OpenAI-compatible `/v1/audio/speech`.' },
      { name: 'Deepgram', description: 'The Deepgram-compatible (Aura) `/v1/speak`, REST and WebSocket.' },
      { name: 'Models' },
      { name: 'Voices' },
      { name: 'Pronunciation dictionaries' },
      ...(options.jobs ? [{ name: 'Jobs', description: 'Long-form synthesis jobs: a whole chapter in one call, durable across crashes.' }] : []),
      { name: 'Account' },
      ...(options.accounts ? [{ name: 'Admin', description: 'The operator’s API, with the admin token.' }] : []),
      { name: 'Operations' },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      responses: errorResponses(),
      headers: headerComponents(options.costHeaderAliasPrefix),
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key, or an access token where the operation says so.' },
        headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key, or an access token where the operation says so.' },
        queryKey: { type: 'apiKey', in: 'query', name: 'api_key', description: 'An API key or access token (WebSocket upgrades only; `access_token` also works).' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (`accounts.adminToken`).' },
        xiApiKey: { type: 'apiKey', in: 'header', name: 'xi-api-key', description: 'An API key or access token, as ElevenLabs’ clients send it (the ElevenLabs routes).' },
        deepgramToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'An API key or access token as `Token <key>`, as Deepgram’s clients send it (the Deepgram routes).' },
      },
    },
  };
}
