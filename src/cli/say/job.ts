/**
 * @module cli/say/job
 * `say --job` / `--job-id` against the long-form jobs API: submit one job
 * (with an `Idempotency-Key`, so a submit retried after a dropped answer
 * makes no second job), follow its event stream — reconnecting with backoff
 * when it drops or goes quiet — until it ends, download its audio to a
 * temporary file beside the target (a dropped download resumes with
 * `Range`) renamed over it once complete, and cancel. Knows nothing of the
 * command line: `command.ts` drives it.
 */
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrorCode, isRetryable } from '../../errors/registry.js';

/** Thrown when the server refuses a request: its message is printed, the exit code is 1. */
export class SayError extends Error {}

/** The job's event stream could not be followed (the job itself may be fine and running on). */
export class FollowLost extends SayError {}

/** A job as the API answers it (the fields `say` reads). */
export interface JobView {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  output_format: { container: string; encoding: string | null; sample_rate: number; bit_rate: number | null };
  characters: number;
  credits: number;
  usd: number | null;
  progress: { characters_done: number; audio_seconds: number; segments_done: number; segments_total: number };
  result: { content_type: string; bytes: number; duration_seconds: number; url: string } | null;
  error: { error_code: string; message: string } | null;
}

export const FINISHED_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** Consecutive failed attempts (to submit, to follow, to download) before giving up. */
const ATTEMPTS = 6;
/** The events route writes a comment every 15 s; this long without a byte, the stream is taken as dropped. */
const IDLE_MS = 45_000;
/** How long one submit may take before it is tried again (with the same key). */
const SUBMIT_TIMEOUT_MS = 60_000;

/** Wait before retry number `attempt` (1, 2, …): 0.5 s doubling, at most 8 s. */
export function backoffMs(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 8_000);
}

export async function refusal(response: Response): Promise<SayError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error_code?: string; message?: string };
    return new SayError(`${body.error_code ?? response.status}: ${body.message ?? text}`);
  } catch {
    return new SayError(`the server answered ${response.status}: ${text.slice(0, 200)}`);
  }
}

/** Answers worth trying again: the server busy, restarting or behind a proxy that lost it. */
function retryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** What a failed fetch says: the cause of a network error rather than "fetch failed". */
export function describe(err: unknown): string {
  const error = err as Error & { cause?: Error };
  return error?.cause?.message ?? error?.message ?? String(err);
}

interface ServerEvent {
  event: string;
  data: string;
}

/** Server-sent events from a response body; `heard` is called on every chunk (the idle watchdog). */
async function* serverEvents(body: ReadableStream<Uint8Array>, heard: () => void): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    heard();
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/gu, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (!line || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /u, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

export class JobClient {
  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  private jobUrl(id: string, tail = ''): string {
    return `${this.url}/tts/jobs/${encodeURIComponent(id)}${tail}`;
  }

  /**
   * Submits a job. Not stopped by Ctrl-C (a submit is quick, and one cut off might have made a job
   * whose id would be lost); a dropped or timed-out submit is tried again under the same key.
   */
  async submit(body: Record<string, unknown>, idempotencyKey: string): Promise<JobView> {
    for (let attempt = 1; ; attempt++) {
      let problem: string;
      try {
        const response = await fetch(`${this.url}/tts/jobs`, {
          method: 'POST',
          headers: { ...this.headers, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
        });
        if (response.ok) return (await response.json()) as JobView;
        // too_many_jobs asks for a minute: that is the user's to decide, not a retry's.
        if (response.status === 429 || !retryableStatus(response.status)) throw await refusal(response);
        problem = (await refusal(response)).message;
      } catch (err) {
        if (err instanceof SayError) throw err;
        problem = describe(err);
      }
      if (attempt >= ATTEMPTS) throw new SayError(`could not submit the job to ${this.url}: ${problem}`);
      await sleep(backoffMs(attempt));
    }
  }

  async get(id: string, signal: AbortSignal): Promise<JobView> {
    const response = await fetch(this.jobUrl(id), { headers: this.headers, signal });
    if (!response.ok) throw await refusal(response);
    return (await response.json()) as JobView;
  }

  /** Cancels a queued or running job (the job as left), or removes a finished one (null). */
  async cancel(id: string, signal: AbortSignal): Promise<JobView | null> {
    const response = await fetch(this.jobUrl(id), { method: 'DELETE', headers: this.headers, signal });
    if (response.status === 204) return null;
    if (!response.ok) throw await refusal(response);
    return (await response.json()) as JobView;
  }

  /**
   * Follows the job's events until it ends, calling `update` with each state, and answers the
   * last one. A stream that drops, closes early or goes quiet is opened again (it starts with the
   * job as it is then, so nothing is missed), after a backoff, up to `ATTEMPTS` times in a row.
   */
  async follow(id: string, signal: AbortSignal, update: (job: JobView) => void): Promise<JobView> {
    for (let failures = 0; ; ) {
      let problem = 'the event stream closed before the job ended';
      const watchdog = new AbortController();
      const idle = setTimeout(() => watchdog.abort(new Error(`no event for ${IDLE_MS / 1000} s`)), IDLE_MS);
      try {
        const response = await fetch(this.jobUrl(id, '/events'), {
          headers: { ...this.headers, accept: 'text/event-stream' },
          signal: AbortSignal.any([signal, watchdog.signal]),
        });
        if (!response.ok) {
          const refused = await refusal(response);
          if (!retryableStatus(response.status) && response.status < 500) throw refused;
          problem = refused.message;
        } else {
          for await (const { event, data } of serverEvents(response.body!, () => idle.refresh())) {
            if (event === 'error') {
              const error = JSON.parse(data) as { error_code: string; message: string };
              const message = `${error.error_code}: ${error.message}`;
              if (!isErrorCode(error.error_code) || !isRetryable(error.error_code)) throw new SayError(message);
              problem = message;
              break;
            }
            if (event !== 'progress' && event !== 'done') continue;
            const job = JSON.parse(data) as JobView;
            failures = 0;
            update(job);
            if (event === 'done' || FINISHED_STATUSES.has(job.status)) return job;
          }
        }
      } catch (err) {
        if (signal.aborted || err instanceof SayError) throw err;
        problem = watchdog.signal.aborted ? String((watchdog.signal.reason as Error).message) : describe(err);
      } finally {
        clearTimeout(idle);
        watchdog.abort();
      }
      failures++;
      if (failures >= ATTEMPTS) throw new FollowLost(`lost job ${id}'s event stream after ${failures} attempts: ${problem}`);
      await sleep(backoffMs(failures), undefined, { signal });
    }
  }

  /**
   * Downloads a succeeded job's audio to `path`: into a temporary file beside it, renamed over it
   * once every byte is there. A download cut off resumes where it stopped (`Range`); one answered
   * whole instead starts over.
   */
  async download(job: JobView, path: string, signal: AbortSignal): Promise<void> {
    const size = job.result!.bytes;
    const temp = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
    let file;
    try {
      file = await open(temp, 'w');
    } catch (err) {
      throw new SayError((err as Error).message);
    }
    let written = 0;
    try {
      for (let failures = 0; ; ) {
        let problem: string;
        try {
          const response = await fetch(this.jobUrl(job.id, '/audio'), {
            headers: { ...this.headers, ...(written > 0 ? { range: `bytes=${written}-` } : {}) },
            signal,
          });
          if (response.status === 206) {
            const start = Number(/^bytes (\d+)-/u.exec(response.headers.get('content-range') ?? '')?.[1]);
            if (start !== written) throw new SayError(`the server resumed job ${job.id}'s audio at byte ${start}, not ${written}`);
          } else if (response.ok) {
            written = 0;
            await file.truncate(0);
          } else if (!retryableStatus(response.status) && response.status < 500) {
            throw await refusal(response);
          }
          if (response.ok) {
            for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
              await file.write(chunk, 0, chunk.length, written);
              written += chunk.length;
              failures = 0;
            }
            if (written > size) throw new SayError(`job ${job.id}'s audio is ${written} bytes, not the ${size} the job says`);
            if (written === size) break;
            problem = `the download stopped at byte ${written} of ${size}`;
          } else problem = (await refusal(response)).message;
        } catch (err) {
          if (signal.aborted || err instanceof SayError) throw err;
          problem = describe(err);
        }
        failures++;
        if (failures >= ATTEMPTS) throw new SayError(`could not download job ${job.id}'s audio: ${problem}`);
        await sleep(backoffMs(failures), undefined, { signal });
      }
      await file.close();
      await rename(temp, path);
    } catch (err) {
      await file.close().catch(() => {});
      await rm(temp, { force: true });
      throw err;
    }
  }
}
