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
import { CAPTION_CONTENT_TYPES, captionFormat, captionLineChars, captions } from '../captions/render.js';
import { ApiError, toApiError } from '../errors/api-error.js';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { authenticateRequest } from '../http/credentials.js';
import { requireScope, type Scope } from '../accounts/scopes.js';
import { acceptRawBodies, decodeJsonObject } from '../http/json-body.js';
import { clientRequestId } from '../http/request-id.js';
import type { JobSubmission } from '../jobs/service.js';
import type { JobSpec } from '../jobs/plan.js';
import type { Services } from '../services.js';
import type { JobRecord } from '../store/store.js';
import { parseCartesiaBody, voiceIdOf, voiceSchema } from './cartesia/parse.js';

const MAX_IDEMPOTENCY_KEY = 255;

const inputsSchema = z
  .array(z.looseObject({ transcript: z.string().min(1), transcript_type: z.enum(['text', 'ssml']).nullish(), voice: voiceSchema.optional() }))
  .min(1);

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

/** Decodes a submit body: the `/tts/bytes` body with `transcript` or `inputs`, and `webhook_url`. */
export function parseJobBody(body: unknown, idempotencyKey: string | null): Omit<JobSubmission, 'idempotencyKey'> & { idempotencyKey: string | null } {
  const fields = decodeJsonObject(body);
  if (fields.stream === true) throw new ApiError('invalid_request', { reason: 'a job is not streamed: leave out stream (follow GET /tts/jobs/{id}/events instead)' });
  let texts: { transcript: string; type?: 'text' | 'ssml' }[];
  if (fields.inputs !== undefined) {
    if (fields.transcript !== undefined) throw new ApiError('invalid_request', { reason: 'send transcript or inputs, not both' });
    const parsed = inputsSchema.safeParse(fields.inputs);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiError('invalid_request', { reason: `inputs must be a non-empty array of {transcript, voice?}${issue.path.length ? ` (inputs.${issue.path.join('.')}: ${issue.message})` : ''}` });
    }
    texts = parsed.data.map((entry) => ({
      transcript: entry.transcript,
      ...(entry.transcript_type ? { type: entry.transcript_type } : {}),
      ...(entry.voice ? { voiceId: voiceIdOf(entry.voice) } : {}),
    }));
  } else {
    texts = [];
  }
  // The shared Cartesia decoder checks every other field the same way /tts/bytes does.
  const input = parseCartesiaBody(texts.length > 0 ? { ...fields, transcript: texts[0].transcript } : fields);
  if (texts.length === 0) texts = [{ transcript: input.transcript, ...(input.transcriptType ? { type: input.transcriptType } : {}) }];
  let webhookUrl: string | null = null;
  if (fields.webhook_url !== undefined && fields.webhook_url !== null) {
    if (typeof fields.webhook_url !== 'string' || !fields.webhook_url) throw new ApiError('invalid_webhook_url', { reason: 'it must be a string holding an absolute URL' });
    webhookUrl = fields.webhook_url;
  }
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
    webhookUrl,
    idempotencyKey,
  };
}

function header(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

function parseLimit(value: unknown): number {
  if (value === undefined || value === '') return 10;
  const limit = typeof value === 'string' && /^\d+$/u.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError('invalid_request', { reason: `limit must be an integer from 1 to 100; got ${JSON.stringify(value)}` });
  return limit;
}

/** A page of jobs as `limit` and `starting_after` name it (the org's list and the admin's view of it). */
export function jobPageQuery(query: Record<string, unknown>): { limit: number; startingAfter?: string } {
  const after = query.starting_after;
  if (after !== undefined && typeof after !== 'string') throw new ApiError('invalid_request', { reason: 'starting_after must be given once, as a job id' });
  return { limit: parseLimit(query.limit), ...(after ? { startingAfter: after } : {}) };
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
    return who;
  };
  // A book's text is larger than a request's: the cap follows the job limit (4 bytes a code point, and room for the rest).
  const bodyLimit = Math.max(services.config.server.bodyLimitBytes, services.config.jobs.maxCharacters * 4 + 1024 * 1024);

  app.register(async (scope) => {
    acceptRawBodies(scope, bodyLimit);
    scope.post('/tts/jobs', { bodyLimit }, async (request, reply) => {
      const who = await caller(request, 'tts');
      const submission = parseJobBody(request.body, header(request, 'idempotency-key'));
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

  app.get<{ Querystring: Record<string, unknown> }>('/tts/jobs', async (request) => {
    const who = await caller(request);
    const page = await jobs.list(who, jobPageQuery(request.query));
    return { data: page.data.map((job) => jobToJson(job, services)), has_more: page.hasMore };
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id', async (request) => jobToJson(await jobs.get(request.params.id, await caller(request)), services));

  app.delete<{ Params: { id: string } }>('/tts/jobs/:id', async (request, reply) => {
    const left = await jobs.cancelOrRemove(request.params.id, await caller(request, 'tts'));
    return left ? jobToJson(left, services) : reply.code(204).send();
  });

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/audio', async (request, reply) => {
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

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/timestamps', async (request) => {
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
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/tts/jobs/:id/captions', async (request, reply) => {
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

  app.get<{ Params: { id: string } }>('/tts/jobs/:id/events', async (request, reply) => {
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
