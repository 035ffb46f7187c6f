/**
 * @module openapi/schemas
 * The zod schemas the OpenAPI document is generated from (zod's JSON Schema
 * output). Requests the server validates with zod are documented from those
 * very schemas (the Cartesia body of `api/cartesia/parse.ts`, extended only
 * with descriptions and the shapes of the fields it checks later); the rest —
 * the OpenAI body, responses, stream events, the error envelope with every
 * registry code — are described here, and the tests validate real responses
 * against them so they stay true.
 */
import { z } from 'zod';
import { SCOPES } from '../accounts/scopes.js';
import { cartesiaBodySchema, generationConfigSchema, outputFormatSchema } from '../api/dialects/cartesia/schema.js';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { component, components } from '../http/route-schema.js';

export { components };

const nullableString = z.string().nullable();
const timestamp = z.string().describe('ISO 8601 date and time (UTC)');

// ---- errors ----

const errorCodes = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];

export const errorCodeSchema = component(
  'ErrorCode',
  z.enum(errorCodes).describe('A code of the error registry; docs/errors.md says when each is sent.'),
);

export const errorBodySchema = component(
  'ErrorBody',
  z
    .object({
      error: errorCodeSchema,
      error_code: errorCodeSchema,
      title: z.string(),
      message: z.string(),
      detail: z.string().describe('The same text as `message`.'),
      status_code: z.int().min(400).max(599),
      request_id: z.string().describe('The server’s id of the request, also in the `x-request-id` header.'),
      doc_url: z.string(),
    })
    .describe('The error envelope of every HTTP error (except `/v1/audio/speech`, which uses OpenAI’s shape).'),
);

export const openAIErrorSchema = component(
  'OpenAIError',
  z
    .object({
      error: z.object({
        message: z.string(),
        type: z.enum(['invalid_request_error', 'authentication_error', 'insufficient_quota', 'permission_error', 'not_found_error', 'rate_limit_error', 'server_error']),
        param: z.string().nullable(),
        code: errorCodeSchema,
      }),
    })
    .describe('Errors of `/v1/audio/speech`, in OpenAI’s shape with the registry’s codes.'),
);

export const elevenLabsErrorSchema = component(
  'ElevenLabsError',
  z
    .object({
      detail: z.union([
        z.object({ status: z.string().describe('ElevenLabs’ name for the code where its clients know one, else the registry’s code.'), message: z.string(), request_id: z.string() }),
        z.array(z.object({ loc: z.array(z.union([z.string(), z.int()])), msg: z.string(), type: z.string() })),
      ]),
    })
    .describe('Errors of the ElevenLabs routes, in ElevenLabs’ shape with the registry’s codes.'),
);

export const deepgramErrorSchema = component(
  'DeepgramError',
  z
    .object({
      err_code: z.string().describe('Deepgram’s code (`INVALID_AUTH`, `INVALID_QUERY_PARAMETER`, `Bad Request`, `PAYLOAD_ERROR`, `Payload Too Large`, `UNSUPPORTED_MEDIA_TYPE`, …), else the registry’s code.'),
      err_msg: z.string(),
      request_id: z.uuid().describe('The request’s UUID, as in `dg-request-id`.'),
    })
    .describe('Errors of the Deepgram routes, in Deepgram’s legacy shape.'),
);

const alignment = z.object({ characters: z.array(z.string()), character_start_times_seconds: z.array(z.number()), character_end_times_seconds: z.array(z.number()) });

export const elevenLabsTimestampsSchema = component(
  'ElevenLabsTimestamps',
  z.object({ audio_base64: z.string(), alignment: alignment.nullable(), normalized_alignment: alignment.nullable() }).describe('Audio with its character alignment.'),
);

export const elevenLabsDialogueTimestampsSchema = component(
  'ElevenLabsDialogueTimestamps',
  elevenLabsTimestampsSchema
    .extend({
      voice_segments: z
        .array(
          z.object({
            voice_id: z.string(),
            start_time_seconds: z.number(),
            end_time_seconds: z.number(),
            character_start_index: z.int().describe('Where the turn’s words start in `alignment.characters`.'),
            character_end_index: z.int().describe('Where they end (exclusive).'),
            dialogue_input_index: z.int().describe('The turn: its index in `inputs`.'),
          }),
        )
        .describe('Each turn’s words: their voice, time and characters.'),
    })
    .describe('Dialogue audio with its character alignment and voice segments.'),
);

export const elevenLabsVoiceSchema = component(
  'ElevenLabsVoice',
  z.looseObject({ voice_id: z.string(), name: z.string(), category: z.enum(['premade', 'cloned']), description: z.string(), labels: z.record(z.string(), z.string()), preview_url: z.string().nullable() }),
);
export const elevenLabsVoiceListSchema = component('ElevenLabsVoiceList', z.object({ voices: z.array(elevenLabsVoiceSchema), has_more: z.boolean(), total_count: z.int() }));
export const elevenLabsModelListSchema = component(
  'ElevenLabsModelList',
  z.array(
    z.looseObject({ model_id: z.string(), name: z.string(), can_do_text_to_speech: z.boolean(), maximum_text_length_per_request: z.int(), languages: z.array(z.object({ language_id: z.string(), name: z.string() })) }),
  ),
);
export const elevenLabsSubscriptionSchema = component(
  'ElevenLabsSubscription',
  z.looseObject({ tier: z.string(), character_count: z.int(), character_limit: z.int(), status: z.string() }).describe('Every field the official SDK’s `Subscription` type requires.'),
);

// ---- speech requests ----

// The Cartesia body, its output format and generation config: declared by the routes (`api/cartesia/schema.ts`).
export { outputFormatSchema, generationConfigSchema };
const ttsRequestSchema = cartesiaBodySchema;
const body = cartesiaBodySchema.shape;
const container = z.enum(['raw', 'wav', 'mp3', 'opus', 'flac']);
const encoding = z.enum(['pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw']);

export const webSocketRequestSchema = component(
  'WebSocketRequest',
  ttsRequestSchema
    .partial()
    .extend({
      transcript: z.string().optional().describe('Text for the context; "" with `continue: false` ends its input.'),
      context_id: z.string().max(256).optional().describe('The context the message belongs to (a UUID is made if absent).'),
      continue: z.boolean().optional().describe('More text follows: buffered to clause boundaries and spoken clause by clause.'),
      flush: z.boolean().optional().describe('Speak everything buffered now, then answer `flush_done`.'),
      flush_id: z.union([z.number(), z.string().max(256)]).optional().describe('With `flush`: echoed in its `flush_done` (default: a count from 1 per context).'),
      cancel: z.boolean().optional().describe('Stop the context: no more events for it.'),
      max_buffer_delay_ms: z
        .int()
        .min(0)
        .max(5000)
        .optional()
        .describe('How long an unfinished clause may wait for more text, from its first text: 0 speaks it now; unset, managed buffering of at most 3000 ms.'),
    })
    .describe('A client message on `/tts/websocket`. A context’s first message needs `model_id`, `voice` and `output_format` (raw).'),
);

// ---- stream events ----

const contextId = z.string().nullable().describe('The context (or the request id); null only for a WebSocket message that could not be read.');

export const chunkEventSchema = component(
  'ChunkEvent',
  z.object({
    type: z.literal('chunk'),
    data: z.string().describe('Base64 audio in the requested format.'),
    done: z.literal(false),
    status_code: z.literal(206),
    step_time: z.number().describe('Milliseconds the piece took to make.'),
    context_id: contextId,
  }),
);

export const timestampsEventSchema = component(
  'TimestampsEvent',
  z.object({
    type: z.literal('timestamps'),
    done: z.literal(false),
    status_code: z.literal(206),
    context_id: contextId,
    word_timestamps: z
      .object({
        words: z.array(z.string()),
        voices: z.array(z.string()).optional().describe('A dialogue’s (`/tts/dialogue`): the id of the voice that speaks each word.'),
        start: z.array(z.number()),
        end: z.array(z.number()),
      })
      .describe('Seconds from the start.'),
  }),
);

export const markTimestampsEventSchema = component(
  'MarkTimestampsEvent',
  z.object({
    type: z.literal('mark_timestamps'),
    done: z.literal(false),
    status_code: z.literal(206),
    context_id: contextId,
    mark_timestamps: z.object({ marks: z.array(z.string()), time: z.array(z.number()) }).describe('Each SSML `<mark>` name, with where it falls in the audio: seconds from the start.'),
  }),
);

export const doneEventSchema = component(
  'DoneEvent',
  z.object({
    type: z.literal('done'),
    done: z.literal(true),
    status_code: z.literal(200),
    context_id: contextId,
    model: z.string().optional().describe('The model that served: a fallback of the one asked for after a fall-over (docs/engines.md, fallback chains).'),
  }),
);

export const flushDoneEventSchema = component(
  'FlushDoneEvent',
  z.object({
    type: z.literal('flush_done'),
    done: z.literal(false),
    flush_done: z.literal(true),
    flush_id: z.union([z.int().min(1), z.string()]).describe('The flush message’s own `flush_id`, or a count from 1 per context.'),
    status_code: z.literal(206),
    context_id: z.string(),
  }),
);

export const errorEventSchema = component(
  'ErrorEvent',
  z
    .object({
      type: z.literal('error'),
      context_id: contextId,
      done: z.literal(true),
      error: z.string().describe('The same text as `message`: the field of Cartesia versions before 2026-03-01, sent for every version.'),
      error_code: errorCodeSchema,
      status_code: z.int().min(400).max(599),
      title: z.string(),
      message: z.string(),
      doc_url: z.string(),
      request_id: z.string(),
    })
    .describe('A failure after the stream opened; the stream (or context) ends with it.'),
);

export const streamEventSchema = component(
  'StreamEvent',
  z
    .discriminatedUnion('type', [chunkEventSchema, timestampsEventSchema, markTimestampsEventSchema, doneEventSchema, errorEventSchema])
    .describe('One `data:` line of `/tts/sse`: JSON, followed by a blank line.'),
);

export const webSocketEventSchema = component(
  'WebSocketEvent',
  z
    .discriminatedUnion('type', [chunkEventSchema, timestampsEventSchema, markTimestampsEventSchema, doneEventSchema, flushDoneEventSchema, errorEventSchema])
    .describe('A server message on `/tts/websocket`.'),
);

export const openAIStreamEventSchema = component(
  'OpenAIStreamEvent',
  z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('speech.audio.delta'), audio: z.string().describe('Base64 audio.') }),
      z.object({
        type: z.literal('speech.audio.done'),
        usage: z.object({ input_tokens: z.int(), output_tokens: z.int(), total_tokens: z.int() }).describe('Characters in, audio samples out.'),
      }),
      z.object({
        type: z.literal('speech.word_timestamps'),
        words: z.array(z.string()),
        start: z.array(z.number()).describe('Seconds from the start of the audio.'),
        end: z.array(z.number()),
      }).describe('With `"timestamps": true`: the words of the audio just sent.'),
      z.object({ type: z.literal('error'), error: openAIErrorSchema.shape.error }),
    ])
    .describe('One `data:` line of `/v1/audio/speech` with `stream_format: "sse"`.'),
);

// ---- catalogue ----

const formatRules = z.object({
  containers: z.array(container),
  encodings: z.array(encoding),
  sample_rates: z.array(z.int()),
  default_encoding: encoding.nullable(),
  mp3_bit_rates: z.array(z.int()),
  default_mp3_bit_rate: z.int().nullable(),
  opus_bit_rates: z.array(z.int()),
  default_opus_bit_rate: z.int().nullable(),
});
const range = z.object({ min: z.number(), max: z.number() }).nullable();

export const modelSchema = component(
  'Model',
  z
    .object({
      id: z.string(),
      object: z.literal('model'),
      name: z.string(),
      description: z.string(),
      engine: z
        .object({
          id: z.string(),
          type: z.string().nullable(),
          native_sample_rate: z.int().nullable(),
          ready: z.boolean(),
          error: nullableString.describe('Why the engine is not serving, when it could not start (a bad model file, a missing folder); null otherwise.'),
          upstreams: z.object({ healthy: z.int(), total: z.int() }).nullable().describe('Remote engines: servers that pass their health probes.'),
        })
        .describe('The engine that serves the model.'),
      max_transcript_chars: z.int(),
      formats: z.object({ bytes: formatRules, stream: formatRules }),
      credit_multiplier: z.number(),
      generation_config: z.object({ speed: range, volume: range }),
      streaming: z.boolean(),
      default_voice: nullableString,
      languages: z.array(z.string()),
    })
    .describe('A model: the API contract of its id, and the engine bound to it.'),
);

const gender = z.enum(['feminine', 'masculine', 'gender_neutral']);

export const voiceSchema = component(
  'Voice',
  z.object({
    id: z.string(),
    user_id: nullableString.describe('The owning organisation; null for built-in voices.'),
    name: z.string(),
    description: z.string(),
    tagline: z.null(),
    gender,
    language: z.string(),
    accent: nullableString,
    locales: z.array(z.object({ locale: z.string(), is_native: z.boolean() })),
    is_owner: z.boolean(),
    access: z.enum(['public', 'private']),
    visibility: z.enum(['public', 'private']),
    created_at: timestamp,
    engines: z.array(z.string()).describe('Engine types that have a profile for the voice.'),
    transcript: z.string().nullable().describe('A cloned voice: what its clip says, as given at clone time or by PATCH; engines that clone read it. Null when not given, and for built-in voices.'),
    mix: z
      .array(z.object({ id: z.string(), weight: z.number() }))
      .nullable()
      .describe('A mixed voice: its voices and their shares (summing to 1, zero weights left out); null for any other voice.'),
  }),
);

const pronunciationItem = z.object({ text: z.string().min(1).max(500), alias: z.string().max(2000), case_sensitive: z.boolean().optional() });

export const dictionarySchema = component(
  'PronunciationDict',
  z.object({
    id: z.string(),
    name: z.string(),
    items: z.array(pronunciationItem),
    owner_id: z.string(),
    pinned: z.boolean(),
    created_at: timestamp,
  }),
);

// ---- long-form jobs ----

export const jobSchema = component(
  'Job',
  z.object({
    id: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    model_id: z.string(),
    voice: z.object({ mode: z.literal('id'), id: z.string() }),
    output_format: z.object({ container, encoding: nullableString, sample_rate: z.int(), bit_rate: z.int().nullable() }),
    characters: z.int(),
    credits: z.int(),
    usd: z.number().nullable(),
    progress: z.object({ characters_done: z.int(), audio_seconds: z.number(), segments_done: z.int(), segments_total: z.int() }),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    expires_at: timestamp.nullable(),
    result: z
      .object({ content_type: z.string(), bytes: z.int(), duration_seconds: z.number(), url: z.string(), timestamps_url: z.string(), captions_url: z.string() })
      .nullable(),
    error: z.object({ error_code: z.string(), title: z.string(), message: z.string(), status_code: z.int() }).nullable(),
    webhook_url: nullableString,
  }),
);

export const jobTimestampsSchema = component(
  'JobTimestamps',
  z.object({
    word_timestamps: z.object({ words: z.array(z.string()), start: z.array(z.number()), end: z.array(z.number()) }),
    marks: z.array(z.object({ name: z.string(), time: z.number() })),
  }),
);

function listOf<T extends z.ZodType>(id: string, item: T) {
  return component(id, z.object({ data: z.array(item), has_more: z.boolean() }));
}

export const modelListSchema = component('ModelList', z.object({ data: z.array(modelSchema) }));
export const voiceListSchema = listOf('VoiceList', voiceSchema);
export const dictionaryListSchema = listOf('PronunciationDictList', dictionarySchema);
export const jobListSchema = listOf('JobList', jobSchema);

// ---- accounts ----

const limits = z.object({
  max_concurrent: z.int().min(1).nullable(),
  rate_limit: z.object({ requests: z.int().min(1), per_seconds: z.int().min(1) }).nullable(),
});

export const orgSchema = component(
  'Organization',
  z.object({
    id: z.string(),
    name: z.string(),
    created_at: timestamp,
    balance: z.object({ credits: z.int(), usd: z.string().describe('A decimal string.') }),
    limits,
  }),
);

const budgetPeriod = z.enum(['day', 'month', 'total']).describe('UTC calendar periods: a day from 00:00 UTC, a month from its first day; `total` never resets.');
const scopeList = z.array(z.enum(SCOPES)).nullable().describe('What the key may do (docs/billing.md has the routes of each); null: every scope.');
const modelList = z.array(z.string()).nullable().describe('Model ids the key may synthesise with (a Voicegate id, or the alias the client sends); null: every model.');
// Checked as CIDR blocks by `accounts/networks.ts`; the pattern is their shape (an address, and `/` with a prefix length or not).
const networkList = z
  .array(z.string().regex(/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/).meta({ examples: ['10.0.0.0/8', '2001:db8::/32'] }))
  .nullable()
  .describe('IPv4 and IPv6 CIDR blocks (`10.0.0.0/8`, `2001:db8::/32`; a bare address is one address) the client’s address must be in; null: anywhere.');

export const apiKeySchema = component(
  'ApiKey',
  z.object({
    id: z.string(),
    org_id: z.string(),
    name: z.string().nullable(),
    created_at: timestamp,
    last_used_at: timestamp.nullable().describe('Written at most once a minute per key by each server.'),
    revoked_at: timestamp.nullable(),
    status: z.enum(['active', 'expired', 'revoked']),
    budget: z
      .object({
        credits: z.int().min(1),
        period: budgetPeriod,
        spent: z.int().describe('Credits charged to the key in the current period.'),
        resets_at: timestamp.nullable().describe('When the next period begins; null for `total`.'),
      })
      .nullable()
      .describe('Credits the key may spend per period; null: only the organisation’s balance limits it.'),
    scopes: scopeList,
    models: modelList,
    expires_at: timestamp.nullable(),
    allowed_networks: networkList,
  }),
);

export const ledgerEntrySchema = component(
  'LedgerEntry',
  z.object({
    id: z.string(),
    kind: z.enum(['charge', 'credit']),
    credits: z.int().describe('Negative for charges.'),
    usd: z.string(),
    key_id: nullableString,
    request_id: nullableString,
    charge_key: nullableString.describe('`<request id>/<batch>`: one row per charge.'),
    client_request_id: nullableString,
    model: nullableString,
    endpoint: nullableString,
    characters: z.int().nullable(),
    reason: nullableString,
    created_at: timestamp,
  }),
);

export const usageSchema = component(
  'Usage',
  z.object({ org: orgSchema, data: z.array(ledgerEntrySchema), has_more: z.boolean() }),
);

const usageGroupValue = (what: string) => z.string().nullable().optional().describe(`Present when grouped by it: ${what}.`);

export const usageSummarySchema = component(
  'UsageSummary',
  z.object({
    data: z.array(
      z.object({
        day: z.string().optional().describe('Present when grouped by it: the UTC day, `YYYY-MM-DDT00:00:00.000Z`.'),
        hour: z.string().optional().describe('Present when grouped by it: the UTC hour, `YYYY-MM-DDThh:00:00.000Z`.'),
        model: usageGroupValue('the model id'),
        endpoint: usageGroupValue('the endpoint'),
        key: usageGroupValue('the API key id (null: none)'),
        org: usageGroupValue('the organisation id'),
        credits: z.int().describe('Credits charged (positive).'),
        characters: z.int(),
        usd: z.string().describe('credits × the price per million credits ÷ 1,000,000.'),
        requests: z.int().describe('Charged requests.'),
        failed_requests: z.int().describe('Requests admitted that ended in an error without a charge.'),
      }),
    ),
    group_by: z.array(z.enum(['day', 'hour', 'model', 'endpoint', 'key', 'org'])),
    from: timestamp.describe('The range’s start (inclusive).'),
    to: timestamp.describe('The range’s end (exclusive).'),
  }),
);

export const orgListSchema = component('OrganizationList', z.object({ data: z.array(orgSchema) }));
export const apiKeyListSchema = component('ApiKeyList', z.object({ data: z.array(apiKeySchema) }));
export const ledgerPageSchema = listOf('LedgerPage', ledgerEntrySchema);
export const issuedKeySchema = component(
  'IssuedApiKey',
  apiKeySchema.extend({ key: z.string().describe('The secret key; shown this once.') }),
);
export const creditsAddedSchema = component('CreditsAdded', z.object({ entry: ledgerEntrySchema, org: orgSchema }));


export const alertCreateSchema = component(
  'UsageAlertCreate',
  z
    .object({
      url: z.string().describe('Where the signed webhooks go: `https://`, not a loopback, private or link-local address (as job webhooks).'),
      key_id: z.string().optional().describe('The key whose budget `budget_percent` watches (one of the organisation’s).'),
      budget_percent: z.array(z.int().min(1).max(1000)).min(1).max(10).optional().describe('Percentages of the key’s budget in its current period.'),
      balance_below: z.array(z.int().min(1)).min(1).max(10).optional().describe('Credits: fires when the organisation’s balance falls under one.'),
    })
    .describe('At least one of `budget_percent` (with `key_id`) and `balance_below`.'),
);

export const alertSchema = component(
  'UsageAlert',
  z.object({
    id: z.string(),
    org_id: z.string(),
    key_id: nullableString,
    url: z.string(),
    budget_percent: z.array(z.int()).nullable(),
    balance_below: z.array(z.int()).nullable(),
    created_at: timestamp,
    events: z
      .array(
        z.object({
          id: z.string(),
          threshold: z.string().describe('`budget:<percent>` or `balance:<credits>`.'),
          period: z.string().describe('A budget period’s start, or `credit:<ledger id>` (a balance’s period runs from the last credits added).'),
          state: z.enum(['pending', 'delivered', 'failed']),
          attempts: z.int().min(0),
          created_at: timestamp,
        }),
      )
      .describe('The latest thresholds crossed, each once per period, newest first.'),
  }),
);

export const alertListSchema = component('UsageAlertList', z.object({ data: z.array(alertSchema) }));

export const accessTokenSchema = component(
  'AccessToken',
  z.object({ token: z.string().startsWith('at_').describe('Use it as an API key on the TTS routes and to read models and voices.') }),
);

// ---- operations ----

export const concurrencySchema = component(
  'Concurrency',
  z
    .object({
      tts_requests: z
        .object({ active: z.int().min(0), limit: z.int().min(1).nullable() })
        .describe('Syntheses in flight (HTTP requests and WebSocket turns); `limit` is the organisation’s max_concurrent, null for none.'),
      tts_websockets: z
        .object({ active: z.int().min(0), limit: z.null() })
        .describe('Open WebSocket connections to this server; they are not limited per organisation.'),
      tts_jobs: z
        .object({ active: z.int().min(0), limit: z.int().min(0) })
        .describe('Background work, not among the requests: segments of the organisation’s long-form jobs being made on this server; `limit` is how many of its jobs may run at once (0: jobs are off).'),
    })
    .describe('The caller’s organisation, in Cartesia’s shape.'),
);

export const readySchema = component(
  'Ready',
  z.object({
    status: z.enum(['ready', 'degraded']).describe('`degraded`: an engine could not start, or the limit counters lost Redis; the server serves.'),
    engines: z.array(z.looseObject({ id: z.string(), type: z.string(), sampleRate: z.int(), ready: z.boolean() })).describe('Each engine’s `info()`.'),
    failed: z.array(z.object({ id: z.string(), type: z.string(), reason: z.string() })).optional().describe('The engines that could not start, with their reasons.'),
    limits: z
      .enum(['local', 'shared', 'degraded', 'unavailable'])
      .optional()
      .describe(
        'With accounts on, where the limit counters are kept: `local` (this server alone), `shared` (Redis), `degraded` (Redis is away; this server enforces its share of each limit) or `unavailable` (Redis is away; limited requests get 503).',
      ),
    store: z
      .enum(['available', 'degraded', 'unavailable'])
      .optional()
      .describe(
        'With accounts on, whether the store answers: `available`; `degraded` (it does not; known keys are served on the credit this server holds, `accounts.outageMaxSeconds` at most); `unavailable` (it does not, and this server no longer admits on held credit).',
      ),
    wyoming: z.object({ port: z.int(), connections: z.int() }).optional().describe('With the Wyoming server on: its port and open connections.'),
  }),
);
