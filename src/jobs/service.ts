/**
 * @module jobs/service
 * Long-form jobs as the API sees them: submit (checked whole, its cost held
 * against the balance, then queued), read, list, cancel or remove, follow,
 * and the result's bytes. Org-scoped like voices: a job of another
 * organisation does not exist for the caller. Knows no HTTP: `api/resources/jobs.ts`
 * decodes requests into these calls and frames what they return.
 *
 * A submit is admitted as every synthesis is, through a session — the gate
 * checks the key, the limits and the balance, and reserves the whole cost —
 * under the held billing policy: the reservation is a hold under the job's
 * id that outlives the request, and the job's end charges it
 * (`JobRunner.bill`) or drops it.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter, on } from 'node:events';
import type { Readable } from 'node:stream';
import type { BlobStorage, ByteRange } from '../cache/blob-storage.js';
import type { JobsConfig } from '../config/schema.js';
import { creditsFor } from '../accounts/pricing.js';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import { LOCAL_ORG_ID, type Caller } from '../synthesis/gate.js';
import { resolveOutputFormat, type FormatRequest } from '../models/output-format.js';
import type { ModelProfile } from '../models/profile.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import { releaseHold, SynthesisSession } from '../synthesis/session.js';
import type { SynthesisServices } from '../synthesis/services.js';
import type { SpeechInput } from '../synthesis/speech-input.js';
import type { JobRecord, Page, PageQuery } from '../store/store.js';
import { removeJobFiles, resultKey, timestampsKey } from './files.js';
import { inputCharacters, planSegments, type JobInput, type JobSpec, type JobText, type PlannedSegment } from './plan.js';
import { dialogueTranscript, type DialogueTurn } from '../synthesis/dialogue.js';
import { jobDiagnostics, publishJob, type JobSubmitted } from './diagnostics.js';
import { JobRunner, retentionMs } from './runner.js';
import type { StitchedTimings } from './stitch.js';

export interface JobSubmission {
  input: JobInput;
  outputFormat: FormatRequest | null;
  texts: JobText[];
  webhookUrl: string | null;
  idempotencyKey: string | null;
}

export interface SubmitContext {
  caller: Caller;
  requestId: string;
  clientRequestId: string | null;
}

export interface JobServiceOptions {
  config: JobsConfig;
  services: SynthesisServices;
  blobs: BlobStorage;
  logger: Logger;
  /** Checks a webhook URL (scheme, and where it resolves: the SSRF guard); throws `invalid_webhook_url`. */
  checkWebhookUrl: (url: string) => Promise<unknown>;
  /** Wakes the webhook deliverer when a job ends. */
  webhookDue?: () => void;
}

/**
 * A turn for the job's voice and each voice its inputs name, in the order they first speak, each
 * with the first text it speaks; null when no input names a voice of its own.
 */
function speakerTurns(jobVoice: string, segments: readonly PlannedSegment[]): DialogueTurn[] | null {
  if (!segments.some((segment) => segment.voiceId !== undefined)) return null;
  const turns = new Map<string, DialogueTurn>();
  for (const segment of segments) {
    const voiceId = segment.voiceId ?? jobVoice;
    if (!turns.has(voiceId)) turns.set(voiceId, { transcript: segment.text, voiceId, type: segment.ssml ? 'ssml' : 'text' });
  }
  return [...turns.values()];
}

/** The end states: nothing changes a job after one of these (but its removal). */
export const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export class JobService {
  readonly runner: JobRunner;
  private readonly config: JobsConfig;
  private readonly services: SynthesisServices;
  private readonly blobs: BlobStorage;
  private readonly changes = new EventEmitter();
  private readonly holds = new Set<string>();

  constructor(private readonly options: JobServiceOptions) {
    this.config = options.config;
    this.services = options.services;
    this.blobs = options.blobs;
    this.changes.setMaxListeners(0);
    this.runner = new JobRunner({
      config: options.config,
      services: options.services,
      blobs: options.blobs,
      logger: options.logger,
      holds: this.holds,
      changed: (id) => this.changes.emit('change', id),
      ended: () => options.webhookDue?.(),
    });
  }

  start(): void {
    this.runner.start();
  }

  async stop(): Promise<void> {
    await this.runner.stop();
    this.changes.emit('stop');
  }

  /**
   * Checks the job whole (model, voice, format, dictionary, every input's tags or SSML, the length),
   * holds its cost and queues it. A repeated `Idempotency-Key` answers the job it made first.
   */
  async submit(submission: JobSubmission, context: SubmitContext): Promise<{ job: JobRecord; quote: Record<string, string>; created: boolean }> {
    const { caller } = context;
    const orgId = caller.orgId ?? LOCAL_ORG_ID;
    if (submission.texts.length > this.config.maxInputs) {
      throw new ApiError('invalid_request', { reason: `inputs has ${submission.texts.length} entries; the maximum is ${this.config.maxInputs}` });
    }
    // Counted (and every tag or SSML read) before anything is looked up or held.
    let characters = 0;
    for (const text of submission.texts) {
      characters += inputCharacters(text);
      if (characters > this.config.maxCharacters) break;
    }
    if (characters > this.config.maxCharacters) throw new ApiError('job_too_long', { count: characters, max: this.config.maxCharacters });
    const segments = planSegments(submission.texts, this.config.segmentCharacters, this.config.inputPauseMs / 1000);
    // The first segment resolved as a request checks the model, voice, format, settings and dictionary for all.
    // Segments are made as 16-bit PCM and the result encoded once, so every model offers mp3, wav and raw here.
    const model = this.services.models.get(submission.input.modelId);
    const format = model ? resolveOutputFormat(submission.outputFormat, jobFormats(model), false) : null;
    // Inputs with voices of their own: the probe is a dialogue with a turn for each voice, so every
    // voice is looked up and checked for the model (`synthesis/dialogue`) before anything is held.
    const turns = speakerTurns(submission.input.voiceId, segments);
    const probe: SpeechInput = {
      ...submission.input,
      ...(turns ? { turns, transcript: dialogueTranscript(turns), voiceId: turns[0].voiceId } : { transcript: segments[0].text, transcriptType: segments[0].ssml ? 'ssml' : 'text' }),
      outputFormat: format ? { container: 'raw', encoding: 'pcm_s16le', sampleRate: format.sampleRate } : submission.outputFormat,
      streaming: false,
      contextId: null,
      cache: false,
    };
    const unfinished = await this.services.store.jobs.countUnfinished(orgId);
    if (unfinished >= this.config.maxQueuedPerOrg) throw new ApiError('too_many_jobs', { count: unfinished, max: this.config.maxQueuedPerOrg }, { 'retry-after': '60' });
    if (submission.webhookUrl) await this.options.checkWebhookUrl(submission.webhookUrl);

    // Admitted as every request is, through a session: limits, then the whole cost held under the
    // job's id (the held policy), which outlives this submit until the job's end bills it.
    const id = `job_${randomBytes(12).toString('hex')}`;
    const session = new SynthesisSession({ services: this.services, transport: 'http', requestId: context.requestId, clientRequestId: context.clientRequestId });
    session.useCaller(caller);
    let request: SynthesisRequest;
    let quote: Record<string, string>;
    try {
      request = await session.admit(probe, 'tts.jobs', {
        characters,
        reserveCharacters: characters,
        maxCharacters: Number.MAX_SAFE_INTEGER,
        hold: { id, ttlMs: this.config.reservationTtlHours * 3_600_000 },
      });
      quote = session.quote;
    } catch (err) {
      session.fail(err);
      throw err;
    } finally {
      await session.end();
    }
    this.holds.add(id);
    const spec: JobSpec = { version: 1, input: submission.input, format: format ?? request.format, segments, requestId: context.requestId, clientRequestId: context.clientRequestId };
    const trace: Record<string, string> = {};
    publishJob(jobDiagnostics.submit, { instance: this.services.instanceId, jobId: id, trace } satisfies JobSubmitted);
    if (trace.traceparent) spec.trace = trace;
    let created: { job: JobRecord; created: boolean };
    try {
      created = await this.services.store.jobs.create({
        id,
        orgId,
        keyId: caller.keyId,
        spec,
        model: request.model.id,
        characters,
        credits: creditsFor(characters, request.model.creditMultiplier),
        segmentsTotal: segments.length,
        webhookUrl: submission.webhookUrl,
        idempotencyKey: submission.idempotencyKey,
        createdAt: new Date().toISOString(),
      });
    } catch (err) {
      await this.dropHold(id);
      throw err;
    }
    // The same submit again: its first job stands, and this one's hold is not needed.
    if (!created.created) await this.dropHold(id);
    else this.runner.kick();
    return { job: created.job, quote: created.created ? quote : {}, created: created.created };
  }

  private async dropHold(id: string): Promise<void> {
    this.holds.delete(id);
    await releaseHold(this.services, id).catch((err) => this.options.logger.warn({ err, job_id: id }, 'could not drop a job hold; it lapses on its own'));
  }

  /** The caller's job; `job_not_found` for a job of another organisation. */
  async get(id: string, caller: Caller): Promise<JobRecord> {
    const job = /^job_[0-9a-f]{24}$/u.test(id) ? await this.services.store.jobs.get(id) : null;
    if (!job || job.orgId !== (caller.orgId ?? LOCAL_ORG_ID)) throw new ApiError('job_not_found', { id });
    return job;
  }

  list(caller: Caller, query: PageQuery): Promise<Page<JobRecord>> {
    return this.services.store.jobs.list(caller.orgId ?? LOCAL_ORG_ID, query);
  }

  /**
   * Cancels a queued or running job (its run stops at its next step, nothing is charged and its
   * hold is released), or removes a finished one with its audio. A job whose charge has begun is
   * past cancelling: it is answered as it is, and ends succeeded. Answers the job as it was left
   * (null when it was removed).
   */
  async cancelOrRemove(id: string, caller: Caller): Promise<JobRecord | null> {
    const job = await this.get(id, caller);
    const jobs = this.services.store.jobs;
    if (!FINISHED.has(job.status)) {
      const now = Date.now();
      const cancelled = await jobs.cancel(id, { finishedAt: new Date(now).toISOString(), expiresAt: new Date(now + retentionMs(this.config)).toISOString(), now });
      if (cancelled) {
        await this.runner.bill(cancelled);
        this.changes.emit('change', id);
        this.options.webhookDue?.();
        return cancelled;
      }
      // Its charge has begun (all its audio is made): too late to cancel, it runs to its end.
      const finishing = await jobs.get(id);
      if (finishing && !FINISHED.has(finishing.status)) return finishing;
      // It ended meanwhile: removed like any finished job.
    }
    const current = await jobs.get(id);
    if (current?.billing === 'held') await this.runner.bill(current);
    await this.storage(() => removeJobFiles(this.blobs, id));
    await jobs.delete(id);
    this.changes.emit('change', id);
    return null;
  }

  /**
   * The job each time it changes, until it ends (the last one yielded is finished) or `signal`
   * fires. Changes made on this server arrive at once; those of a run elsewhere by polling.
   */
  async *follow(id: string, caller: Caller, signal: AbortSignal): AsyncGenerator<JobRecord> {
    let job = await this.get(id, caller);
    yield job;
    const pollMs = Math.min(this.config.pollMs, 1_000);
    while (!FINISHED.has(job.status) && !signal.aborted) {
      await this.changeOf(id, pollMs, signal);
      if (signal.aborted) return;
      const next = await this.services.store.jobs.get(id);
      if (!next) throw new ApiError('job_not_found', { id });
      if (changed(job, next)) yield next;
      job = next;
    }
  }

  /** Resolves on a change of `id` here, after `ms`, or when `signal` fires, whichever is first. */
  private async changeOf(id: string, ms: number, signal: AbortSignal): Promise<void> {
    const local = new AbortController();
    const timer = setTimeout(() => local.abort(), ms);
    const stop = () => local.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const [changedId] of on(this.changes, 'change', { signal: local.signal })) {
        if (changedId === id) return;
      }
    } catch {
      // The timer or the caller's signal: either ends the wait.
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
  }

  /** The result's bytes (a range of them), once the job has succeeded. */
  async audio(id: string, caller: Caller, range?: ByteRange): Promise<{ job: JobRecord; stream: Readable }> {
    const job = await this.get(id, caller);
    if (job.status !== 'succeeded' || !job.result) throw new ApiError('job_not_finished', { id, status: job.status });
    const stream = await this.storage(() => this.blobs.read(resultKey(id), range));
    if (!stream) throw new ApiError('job_not_found', { id });
    return { job, stream };
  }

  /**
   * A short-lived presigned URL of the result, when downloads are redirects (`jobs.download`) and
   * the storage can sign one (a bucket); null: stream it instead.
   */
  async audioUrl(job: JobRecord, filename: string): Promise<string | null> {
    if (this.config.download !== 'redirect' || !this.blobs.url || !job.result) return null;
    const url = this.blobs.url.bind(this.blobs);
    return this.storage(() =>
      url(resultKey(job.id), { expiresInSeconds: this.config.downloadUrlSeconds, contentType: job.result!.contentType, filename }),
    );
  }

  /** A step on the job storage; one that cannot reach it is `storage_unavailable` (503), never a 500. */
  private async storage<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      if (err instanceof ApiError) throw err;
      this.options.logger.warn({ err }, 'job storage unreachable');
      throw new ApiError('storage_unavailable', {}, { 'retry-after': '5' });
    }
  }

  /** The result's word timings and marks, once the job has succeeded. */
  async timestamps(id: string, caller: Caller): Promise<{ words: StitchedTimings['words']; marks: { name: string; time: number }[] }> {
    const job = await this.get(id, caller);
    if (job.status !== 'succeeded') throw new ApiError('job_not_finished', { id, status: job.status });
    if (!job.result?.timestamps) return { words: [], marks: [] };
    const { words, marks } = await this.timings(id);
    // Words are kept for every job (its captions), but given here only where the job asked for them.
    return { words: (job.spec as JobSpec).input.wordTimestamps ? words : [], marks };
  }

  /** The words a succeeded job spoke and its audio's length, for its captions. */
  async spokenWords(id: string, caller: Caller): Promise<{ words: StitchedTimings['words']; duration: number }> {
    const job = await this.get(id, caller);
    if (job.status !== 'succeeded' || !job.result) throw new ApiError('job_not_finished', { id, status: job.status });
    return { words: (await this.timings(id)).words, duration: job.result.durationSeconds };
  }

  /** The stored timings of a job's result; none for a result kept without them. */
  private async timings(id: string): Promise<StitchedTimings> {
    const stored = await this.storage(() => this.blobs.get(timestampsKey(id)));
    return stored ? JSON.parse(stored.toString('utf8')) : { words: [], marks: [] };
  }
}

const MP3_BIT_RATES = [32000, 64000, 96000, 128000, 192000, 256000, 320000];

/** The model's whole-clip formats, with mp3 added where the model has none (a job's result is encoded once, at the end). */
function jobFormats(model: ModelProfile): ModelProfile {
  if (model.clip.containers.includes('mp3')) return model;
  return { ...model, clip: { ...model.clip, containers: [...model.clip.containers, 'mp3'], mp3BitRates: MP3_BIT_RATES, defaultMp3BitRate: 128000 } };
}

function changed(before: JobRecord, after: JobRecord): boolean {
  return before.status !== after.status || before.segmentsDone !== after.segmentsDone || before.finishedAt !== after.finishedAt;
}
