/**
 * @module api/jobs
 * Long-form synthesis jobs in the Cartesia dialect's style: `POST /tts/jobs`
 * (the `/tts/bytes` body, with `inputs`, a larger length limit and
 * `webhook_url`) answers 202 with the job; `GET /tts/jobs` lists the
 * organisation's jobs (cursor paging); `GET /tts/jobs/{id}` reads one,
 * `/audio` downloads its result (with `Range`, or a redirect to a presigned
 * URL of the bucket), `/timestamps` its word
 * timings and marks, `/captions` its SRT or WebVTT captions, `/events` follows it as server-sent events until it
 * ends; `DELETE` cancels a queued or running job, or removes a finished one
 * and its audio. The work is `jobs/service.ts`'s; this module only decodes
 * and frames.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CAPTION_CONTENT_TYPES, captionFormat, captionLineChars, captions } from '../../captions/render.js';
import { ApiError, toApiError } from '../../errors/api-error.js';
import { ERRORS, type ErrorCode } from '../../errors/registry.js';
import { authenticateRequest } from '../../http/credentials.js';
import { requireScope, type Scope } from '../../accounts/scopes.js';
import { acceptJsonBodies, decodeJsonObject } from '../../http/json-body.js';
import { binaryContent, component, errorResponses, jsonContent, problemOf, schemaRef, textContent } from '../../http/route-schema.js';
import { clientRequestId } from '../../http/request-id.js';
import type { JobSubmission } from '../../jobs/service.js';
import type { JobSpec } from '../../jobs/plan.js';
import type { Services } from '../../services.js';
import type { JobRecord } from '../../store/store.js';
import { cartesiaInput, voiceIdOf, voiceSchema } from '../dialects/cartesia/parse.js';
import { cartesiaFields, type CartesiaBody } from '../dialects/cartesia/schema.js';

const MAX_IDEMPOTENCY_KEY = 255;

const INPUTS_SHAPE = 'inputs must be a non-empty array of {transcript, voice?}';

const inputsSchema = z
  .array(z.looseObject({ transcript: z.string().min(1), transcript_type: z.enum(['text', 'ssml']).nullish(), voice: voiceSchema.optional() }))
  .min(1)
  .describe('Instead of `transcript`: texts spoken in order into one result, with a pause between them; each may name its own voice.');

const { $schema: _drop, ...inputsJson } = z.toJSONSchema(inputsSchema, { unrepresentable: 'any' }) as Record<string, unknown>;

/** The `/tts/bytes` fields but `stream`, which a job refuses itself. */
const { stream: _stream, ...speechFields } = cartesiaFields;

const NOT_STREAMED = 'a job is not streamed: leave out stream (follow GET /tts/jobs/{id}/events instead)';
const BOTH = 'send transcript or inputs, not both';
const WEBHOOK = 'invalid_webhook_url: it must be a string holding an absolute URL';

/**
 * The body of `POST /tts/jobs`: the `/tts/bytes` body with `inputs`, `webhook_url` and no `stream`.
 * Exactly one of `transcript` and `inputs`: both is `invalid_request`, neither `missing_transcript`,
 * as always. Fields in the order their problems are reported.
 */
const jobFields = {
  stream: z.boolean().optional().refine((value) => value !== true, { error: NOT_STREAMED }).meta({ const: false }).describe('Not accepted as `true`: follow `GET /tts/jobs/{id}/events` instead.'),
  // Checked whole, with the message naming the entry at fault (`inputs.0.transcript: …`).
  inputs: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      const parsed = inputsSchema.safeParse(value);
      if (parsed.success) return;
      const issue = parsed.error.issues[0];
      ctx.addIssue({ code: 'custom', message: `${INPUTS_SHAPE}${issue.path.length ? ` (inputs.${issue.path.join('.')}: ${issue.message})` : ''}` });
    })
    .optional(),
  ...speechFields,
  transcript: cartesiaFields.transcript.optional().describe('The text to speak, up to `jobs.maxCharacters` (1,000,000) characters counted as for billing; or send `inputs`.'),
  output_format: cartesiaFields.output_format.describe('`mp3`, `wav` or `raw` on every model; `opus` on a model whose clip formats allow it.'),
  webhook_url: z
    .string({ error: WEBHOOK })
    .min(1, { error: WEBHOOK })
    .nullish()
    .describe('Receives a signed POST when the job ends (Standard Webhooks); https only, and never a private address unless the operator allows it.'),
};

/** The JSON Schema of `schema` (no component named). */
function jsonOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

// The document names the two texts only in `oneOf`, so a body made from it sends exactly one.
const { transcript: _t, inputs: _i, ...sharedFields } = jobFields;
const jobDocument = {
  properties: (jsonOf(z.object(sharedFields)) as { properties: unknown }).properties,
  required: ['model_id', 'voice', 'output_format'],
  oneOf: [
    { properties: { transcript: jsonOf(jobFields.transcript) }, required: ['transcript'] },
    { properties: { inputs: inputsJson }, required: ['inputs'] },
  ],
};

/**
 * The body of `POST /tts/jobs`: the `/tts/bytes` body with `inputs`, `webhook_url` and no `stream`.
 * Exactly one of `transcript` and `inputs`: both is `invalid_request`, neither `missing_transcript`,
 * as always. Fields in the order their problems are reported.
 */
export const jobBodySchema = component(
  'JobCreate',
  z
    .looseObject(jobFields)
    .superRefine((body, ctx) => {
      if (body.inputs !== undefined && body.transcript !== undefined) ctx.addIssue({ code: 'custom', message: BOTH, path: ['transcript'] });
      else if (body.inputs === undefined && body.transcript === undefined) ctx.addIssue({ code: 'custom', message: 'missing_transcript', path: ['transcript'] });
    })
    .meta(jobDocument)
    .describe('The body of `POST /tts/jobs`: the `/tts/bytes` body with `inputs` (exactly one of `transcript` and `inputs`), a larger limit and `webhook_url`; `stream` is not accepted.'),
);

type JobBody = z.infer<typeof jobBodySchema>;

/** A page of jobs: `limit` 1–100 (default 10), `starting_after` a job id given once. */
export const jobPageSchema = z.object({
  limit: z
    .string({ error: (issue) => `limit must be an integer from 1 to 100; got ${JSON.stringify(issue.input)}` })
    .refine((value) => value === '' || (/^\d+$/u.test(value) && Number(value) >= 1 && Number(value) <= 100), {
      error: (issue) => `limit must be an integer from 1 to 100; got ${JSON.stringify(issue.input)}`,
    })
    .optional()
    .describe('1–100 (default 10).'),
  starting_after: z.string({ error: 'starting_after must be given once, as a job id' }).optional().describe('The page after this job id.'),
});

const jobParams = z.object({ id: z.string().describe('The job id (at most 256 characters).') });

const KEY_ERRORS = [401, 403, 429, 503];
const TTS_ERRORS = [400, 401, 402, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504];
const AUDIO_TYPES = ['audio/wav', 'audio/mpeg', 'application/octet-stream', 'audio/ogg'];
const KEY = { auth: 'key', token: true } as const;

const SUBMIT = {
  tags: ['Jobs'],
  summary: 'Submit a long-form job',
  description:
    'Checks the whole job, holds its cost and queues it; `202` with the job and the cost headers of the whole job. `Idempotency-Key` (1 to 255 characters) makes a retried submit answer the same job.',
  body: jobBodySchema,
  response: {
    202: { description: 'The job, queued.', cost: true, content: jsonContent('Job') },
    ...errorResponses('native', TTS_ERRORS),
  },
};
const LIST = { tags: ['Jobs'], summary: 'List the organisation’s jobs', querystring: jobPageSchema, response: { 200: { description: 'A page, newest first.', content: jsonContent('JobList') }, ...errorResponses('native', [400, ...KEY_ERRORS]) } };
const GET = { tags: ['Jobs'], summary: 'Get a job', params: jobParams, response: { 200: { description: 'The job.', content: jsonContent('Job') }, ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]) } };
const DELETE = {
  tags: ['Jobs'],
  summary: 'Cancel a queued or running job, or remove a finished one',
  params: jobParams,
  response: {
    200: { description: 'Cancelled: the job; or, when its charge had already begun, the job as it is (running, to end succeeded).', content: jsonContent('Job') },
    204: { description: 'Removed with its audio.' },
    ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]),
  },
};
const AUDIO = {
  tags: ['Jobs'],
  summary: 'Download a job’s result',
  description:
    'Supports `Range` (206, 416). With `jobs.download: redirect` and a bucket as the jobs’ storage, answers 302 to a presigned URL of the bucket, valid for `jobs.downloadUrlSeconds`, which serves the same bytes and ranges.',
  params: jobParams,
  response: {
    200: { description: 'The result.', content: binaryContent(...AUDIO_TYPES) },
    206: { description: 'Part of the result.', content: binaryContent(...AUDIO_TYPES) },
    302: { description: 'The result is downloaded from the bucket: `Location` is a presigned URL.' },
    416: { description: 'The range starts past the end (`Content-Range: bytes */<size>`).' },
    ...errorResponses('native', [400, 404, 409, 414, 503, ...KEY_ERRORS]),
  },
};
const TIMESTAMPS = {
  tags: ['Jobs'],
  summary: 'A job’s word timings and marks',
  params: jobParams,
  response: { 200: { description: 'On the result’s clock, in seconds.', content: jsonContent('JobTimestamps') }, ...errorResponses('native', [400, 404, 409, 414, 503, ...KEY_ERRORS]) },
};
// Checked in code (`captions/render.ts`), with their own codes; documented by shape.
const CAPTIONS = {
  tags: ['Jobs'],
  summary: 'A job’s captions (SRT or WebVTT)',
  description:
    'Made from the words of every succeeded job, across its segments and inputs; inputs with voices of their own name the speaker (WebVTT `<v Name>`, SRT `Name: `). See docs/api.md#captions.',
  params: jobParams,
  querystring: z.object({
    format: z.unknown().optional().meta({ type: 'string', enum: ['vtt', 'srt'] }).describe('`vtt` (default) or `srt`; anything else is 400 `invalid_caption_format`.'),
    max_line_chars: z.unknown().optional().meta({ type: 'integer', minimum: 20, maximum: 80 }).describe('Display columns a line may take (default 42); else 400 `invalid_caption_options`.'),
  }),
  response: {
    200: { description: 'The captions.', content: textContent('text/vtt; charset=utf-8', 'application/x-subrip') },
    ...errorResponses('native', [400, 404, 409, 414, 503, ...KEY_ERRORS]),
  },
};
const EVENTS = {
  tags: ['Jobs'],
  summary: 'Follow a job as server-sent events',
  description: '`progress` events while it is queued or running, one `done` event when it ends (each the `Job`), then the stream ends; `error` if following fails.',
  params: jobParams,
  response: { 200: { description: 'The job’s events.', content: { 'text/event-stream': { schema: schemaRef('Job') } } }, ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]) },
};

/** The job's view, as every route answers it. */
export function jobToJson(job: JobRecord, services: Services) {
  const spec = job.spec as JobSpec;
  const pricing = services.accounts?.pricing;
  const usd = pricing ? Math.round(job.credits * pricing.usdPerMillionCredits) / 1e6 : null;
  const error = job.error
    ? {
        error_code: job.error.code,
        title: (ERRORS as Record<string, { title: string; status: number }>)[job.error.code]?.title ?? job.error.code,
        message: job.error.message,
        status_code: (ERRORS as Record<string, { title: string; status: number }>)[job.error.code]?.status ?? 500,
      }
    : null;
  return {
    id: job.id,
    status: job.status,
    model_id: job.model,
    voice: { mode: 'id', id: spec.input.voiceId },
    output_format: { container: spec.format.container, encoding: spec.format.encoding ?? null, sample_rate: spec.format.sampleRate, bit_rate: spec.format.bitRate ?? null },
    characters: job.characters,
    credits: job.credits,
    usd,
    progress: {
      characters_done: job.charactersDone,
      audio_seconds: Math.round(job.audioSeconds * 1000) / 1000,
      segments_done: job.segmentsDone,
      segments_total: job.segmentsTotal,
    },
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    expires_at: job.expiresAt,
    result: job.result
      ? {
          content_type: job.result.contentType,
          bytes: job.result.bytes,
          duration_seconds: Math.round(job.result.durationSeconds * 1000) / 1000,
          url: `/tts/jobs/${job.id}/audio`,
          timestamps_url: `/tts/jobs/${job.id}/timestamps`,
          captions_url: `/tts/jobs/${job.id}/captions`,
        }
      : null,
    error,
    webhook_url: job.webhookUrl,
  };
}

/** A submit body the route's schema has validated, as the submission (`Idempotency-Key` checked here). */
export function jobSubmission(body: JobBody, idempotencyKey: string | null): Omit<JobSubmission, 'idempotencyKey'> & { idempotencyKey: string | null } {
  const inputs = body.inputs === undefined ? undefined : inputsSchema.parse(body.inputs);
  let texts: { transcript: string; type?: 'text' | 'ssml'; voiceId?: string }[] = (inputs ?? []).map((entry) => ({
    transcript: entry.transcript,
    ...(entry.transcript_type ? { type: entry.transcript_type } : {}),
    ...(entry.voice ? { voiceId: voiceIdOf(entry.voice) } : {}),
  }));
  const input = cartesiaInput({ ...body, transcript: texts.length > 0 ? texts[0].transcript : (body.transcript as string) } as CartesiaBody);
  if (texts.length === 0) texts = [{ transcript: input.transcript, ...(input.transcriptType ? { type: input.transcriptType } : {}) }];
  if (idempotencyKey !== null && (!idempotencyKey || idempotencyKey.length > MAX_IDEMPOTENCY_KEY)) {
    throw new ApiError('invalid_request', { reason: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY} characters` });
  }
  return {
    input: {
      modelId: input.modelId,
      voiceId: input.voiceId,
      outputFormat: input.outputFormat,
      generationConfig: input.generationConfig,
      language: input.language,
      wordTimestamps: input.wordTimestamps,
      pronunciationDictId: input.pronunciationDictId,
    },
    outputFormat: input.outputFormat,
    texts,
    webhookUrl: body.webhook_url ?? null,
    idempotencyKey,
  };
}

function header(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** A page of jobs as `limit` and `starting_after` name it (the org's list and the admin's view of it). */
export function jobPageQuery(query: Record<string, unknown>): { limit: number; startingAfter?: string } {
  const parsed = jobPageSchema.safeParse(query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw problemOf(issue.message, issue.path.map(String), 'query').error;
  }
  const { limit, starting_after: after } = parsed.data;
  return { limit: limit ? Number(limit) : 10, ...(after ? { startingAfter: after } : {}) };
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size`; null: answer the whole; 'unsatisfiable': 416. */
export function parseRange(value: string | null, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (!value) return null;
  const match = /^bytes=(\d*)-(\d*)$/u.exec(value.trim());
  // Several ranges, or another unit: answered whole, as RFC 9110 allows.
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== '' && Number(match[2]) < start) return null;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

export function registerJobs(app: FastifyInstance, services: Services): void {
  const jobs = services.jobs;
  if (!jobs) return;
  /** The caller, once it holds `scope`: `tts` to submit or cancel, `jobs:read` to read (an access token will do). */
  const caller = async (request: FastifyRequest, scope: Scope = 'jobs:read') => {
    const who = await authenticateRequest(services.gate, request, { token: 'tts' });
    requireScope(who, scope);
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    return who;
  };
  const declared = <S>(schema: S) => ({ schema, attachValidation: true, config: KEY });
  // A book's text is larger than a request's: the cap follows the job limit (4 bytes a code point, and room for the rest).
  const bodyLimit = Math.max(services.config.server.bodyLimitBytes, services.config.jobs.maxCharacters * 4 + 1024 * 1024);

  app.register(async (scope) => {
    acceptJsonBodies(scope, bodyLimit);
    scope.post('/tts/jobs', { bodyLimit, ...declared(SUBMIT) }, async (request, reply) => {
      const who = await authenticateRequest(services.gate, request, { token: 'tts' });
      requireScope(who, 'tts');
      // Bytes that are not a JSON object are `invalid_json`, before the schema's refusal.
      decodeJsonObject(request.body);
      if (request.validationError) throw request.validationError;
      const submission = jobSubmission(request.body as JobBody, header(request, 'idempotency-key'));
      const { job, quote, created } = await jobs.submit(submission, { caller: who, requestId: String(request.id), clientRequestId: clientRequestId(request.headers) });
      // A replayed submit holds nothing new: its answer carries no cost headers.
      return reply
        .code(202)
        .headers(quote)
        .header('location', `/tts/jobs/${job.id}`)
        .header('idempotent-replayed', created ? 'false' : 'true')
        .send(jobToJson(job, services));
    });
  });

  app.get<{ Querystring: Record<string, unknown> }>('/tts/jobs', declared(LIST), async (request) => {
    const who = await caller(request);
    const page = await jobs.list(who, jobPageQuery(request.query));
    return { data: page.data.map((job) => jobToJson(job, services)), has_more: page.hasMore };
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id', declared(GET), async (request) => jobToJson(await jobs.get(request.params.id, await caller(request)), services));

  app.delete<{ Params: { id: string } }>('/tts/jobs/:id', declared(DELETE), async (request, reply) => {
    const left = await jobs.cancelOrRemove(request.params.id, await caller(request, 'tts'));
    return left ? jobToJson(left, services) : reply.code(204).send();
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/audio', declared(AUDIO), async (request, reply) => {
    const who = await caller(request);
    const job = await jobs.get(request.params.id, who);
    if (job.status !== 'succeeded' || !job.result) throw new ApiError('job_not_finished', { id: job.id, status: job.status });
    const filename = `${job.id}.${extension(job.result.contentType)}`;
    // The bucket serves the bytes (and the range) itself: a presigned URL, valid for minutes.
    const url = await jobs.audioUrl(job, filename);
    if (url) return reply.code(302).header('location', url).header('cache-control', 'no-store').send();
    const size = job.result.bytes;
    const range = parseRange(header(request, 'range'), size);
    if (range === 'unsatisfiable') {
      return reply.code(416).header('content-range', `bytes */${size}`).header('accept-ranges', 'bytes').send();
    }
    const { stream } = await jobs.audio(job.id, who, range ?? undefined);
    reply.header('accept-ranges', 'bytes').header('content-type', job.result.contentType);
    reply.header('content-disposition', `attachment; filename="${filename}"`);
    if (range) {
      reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`).header('content-length', range.end - range.start + 1);
    } else reply.header('content-length', size);
    return reply.send(stream);
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/timestamps', declared(TIMESTAMPS), async (request) => {
    const { words, marks } = await jobs.timestamps(request.params.id, await caller(request));
    return {
      word_timestamps: {
        words: words.map((w) => w.word),
        // Inputs with voices of their own: each word's voice, as a dialogue's timestamps give it.
        ...(words.some((w) => w.voice) ? { voices: words.map((w) => w.voice ?? null) } : {}),
        start: words.map((w) => w.start),
        end: words.map((w) => w.end),
      },
      marks,
    };
  });

  // Captions of every succeeded job, across its segments and inputs: a dialogue's cues name each voice.
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/tts/jobs/:id/captions', declared(CAPTIONS), async (request, reply) => {
    const format = captionFormat(request.query.format);
    const maxLineChars = captionLineChars(request.query.max_line_chars);
    const who = await caller(request);
    const { words, duration } = await jobs.spokenWords(request.params.id, who);
    const names = new Map<string, string>();
    for (const id of new Set(words.flatMap((word) => (word.voice ? [word.voice] : [])))) names.set(id, (await services.voices.get(id, who.orgId))?.name ?? id);
    const body = captions(words, format, { maxLineChars, duration, speakerName: (voice) => names.get(voice) ?? voice });
    reply.header('content-disposition', `attachment; filename="${request.params.id}.${format}"`);
    return reply.type(CAPTION_CONTENT_TYPES[format]).send(body);
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/events', declared(EVENTS), async (request, reply) => {
    const who = await caller(request);
    const controller = new AbortController();
    // Read before the stream opens, so an unknown job is an ordinary 404.
    const updates = jobs.follow(request.params.id, who, controller.signal);
    const first = await updates.next();
    reply.raw.once('close', () => controller.abort());
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (event: string, job: JobRecord) => res.write(`event: ${event}\ndata: ${JSON.stringify(jobToJson(job, services))}\n\n`);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    keepAlive.unref();
    try {
      if (!first.done) send(first.value.status === 'queued' || first.value.status === 'running' ? 'progress' : 'done', first.value);
      for await (const job of updates) send(job.status === 'queued' || job.status === 'running' ? 'progress' : 'done', job);
    } catch (err) {
      const error = toApiError(err);
      res.write(`event: error\ndata: ${JSON.stringify({ error_code: error.code, message: error.message, status_code: error.status })}\n\n`);
    } finally {
      clearInterval(keepAlive);
      res.end();
    }
  });
}

function extension(contentType: string): string {
  if (contentType.includes('ogg')) return 'opus'; // Ogg Opus's own extension (RFC 7845, section 9)
  return contentType.includes('mpeg') ? 'mp3' : contentType.includes('wav') ? 'wav' : 'pcm';
}

export type { ErrorCode };
