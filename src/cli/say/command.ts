/**
 * @module cli/say/command
 * `voicegate say`: speaks a text or a file into an audio file, against a
 * running server (`--url`, key from `VOICEGATE_API_KEY`) or a server started
 * in this process on a loopback port (with `VOICEGATE_API_KEY` it bills
 * that key's organisation in the configured data directory; without, it runs
 * with accounts off and charges nothing). Text past the model's per-request
 * limit is split at sentence boundaries; each piece is fetched as raw 16-bit
 * PCM and encoded here, so the joins are seamless. Prints the total cost.
 * Ctrl-C stops the request in flight and removes the partial file unless
 * `--keep-partial`.
 *
 * `--job` speaks the whole text as one long-form job on the server instead
 * (`job.ts`): its id is printed at once, its progress followed, its audio
 * downloaded when it succeeds. Ctrl-C leaves the job to run on; `--job-id`
 * follows (or, with `--cancel`, cancels) a job already submitted.
 *
 * `--captions out.vtt` (or `.srt`) writes the audio's captions beside it:
 * each piece of short text comes from `/tts/captioned` with its words, put
 * on the joined audio's clock and made into cues by the same builder the
 * server uses (`captions/`); a job's come from its `/captions`.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createApp, type App } from '../../app.js';
import { captions, type CaptionFormat } from '../../captions/render.js';
import type { CaptionWord } from '../../captions/cues.js';
import { defaultMp3BitRate } from '../../audio/mp3.js';
import type { Config } from '../../config/schema.js';
import { createLogger } from '../../log/logger.js';
import { UsageError } from '../accounts.js';
import { FINISHED_STATUSES, FollowLost, JobClient, refusal, SayError, type JobView } from './job.js';
import { AudioFile, containerFor } from './output.js';
import { Progress } from './progress.js';
import { codePoints, splitText } from '../../synthesis/split.js';

export const SAY_USAGE = `voicegate say "text" -o out.wav [options]
  voicegate say -f chapter.txt -o chapter.mp3 [options]
    -o, --output <file>   .wav, .mp3 or .raw (16-bit PCM); written only once complete
    -f, --file <file>     read the text from a file ("-" for standard input)
    --model <id>          model (default gepard-1.0)
    --voice <id>          voice (default: the model's default voice, else sarah)
    --sample-rate <hz>    output sample rate (default 24000)
    --bit-rate <bps>      mp3 bit rate (default: the rate's usual one)
    --speed <x>           generation speed, e.g. 0.8 or 1.2
    --language <code>     language of the text
    --url <url>           a running server (key from VOICEGATE_API_KEY); default: in this process
    --captions <file>     also write the audio's captions, .vtt (WebVTT) or .srt
    --keep-partial        on Ctrl-C or an error, keep the audio written so far
    --job                 speak the whole text as one long-form job on the server; Ctrl-C leaves
                          it there and prints the --job-id command that resumes it
    --job-id <id>         follow a submitted job and download its audio once done (no text)
    --cancel              with --job-id: cancel that job instead`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  file: { type: 'string', short: 'f' },
  model: { type: 'string' },
  voice: { type: 'string' },
  'sample-rate': { type: 'string' },
  'bit-rate': { type: 'string' },
  speed: { type: 'string' },
  language: { type: 'string' },
  url: { type: 'string' },
  'keep-partial': { type: 'boolean' },
  captions: { type: 'string' },
  job: { type: 'boolean' },
  'job-id': { type: 'string' },
  cancel: { type: 'boolean' },
  config: { type: 'string' },
  tls: { type: 'string' },
} as const;

export { SayError };

interface Totals {
  credits: number;
  usd: number;
  remaining: string | null;
  billed: boolean;
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`--${name} takes a number, not ${value}`);
  return parsed;
}

/** The captions' format from the file's extension; null without `--captions`. */
function captionsFormatFor(file: string | undefined): CaptionFormat | null {
  if (file === undefined) return null;
  const format = /\.(vtt|srt)$/i.exec(file)?.[1]?.toLowerCase();
  if (!format) throw new UsageError(`${file}: the captions must end in .vtt or .srt`);
  return format as CaptionFormat;
}

async function writeCaptions(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new SayError(`cannot write ${file}: ${(err as Error).message}`);
  }
}

async function readText(positionals: string[], file: string | undefined): Promise<string> {
  if (file !== undefined) {
    if (positionals.length) throw new UsageError('give the text or --file, not both');
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
    }
  }
  return positionals.join(' ');
}

/**
 * A server to speak with: the one at --url, or one started here; `close` stops the latter. One
 * started here runs jobs only for `--job`/`--job-id` (in the configured data directory, so a job
 * left by Ctrl-C is resumed by the next `--job-id`); otherwise it leaves queued jobs alone.
 */
async function connect(config: Config, url: string | undefined, key: string | undefined, runJobs = false): Promise<{ url: string; local: boolean; close(): Promise<void> }> {
  if (url) return { url: url.replace(/\/+$/, ''), local: false, close: async () => {} };
  const local: Config = {
    ...config,
    // One utterance, then gone: warming up for later callers would only delay it.
    server: { ...config.server, host: '127.0.0.1', port: 0, tls: null, warmUp: false },
    engines: Object.fromEntries(Object.entries(config.engines).map(([id, engine]) => [id, engine.type === 'espeak' ? { ...engine, warmUpJobs: 0 } : engine])),
    // Without a key there is nobody to bill: the in-process server runs without accounts.
    accounts: { ...config.accounts, enabled: key ? config.accounts.enabled : false },
    jobs: runJobs ? { ...config.jobs, enabled: true, concurrency: Math.max(1, config.jobs.concurrency) } : { ...config.jobs, concurrency: 0 },
  };
  const app: App = await createApp(local, createLogger('silent'));
  try {
    return { url: await app.listen(), local: true, close: () => app.close() };
  } catch (err) {
    await app.close().catch(() => {});
    throw err;
  }
}

export async function runSay(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  positionals.shift(); // "say"
  if (values.job || values['job-id'] !== undefined || values.cancel) return runJob(config, values, positionals);
  const output = values.output;
  if (!output) throw new UsageError(`say needs -o <file>\n\n${SAY_USAGE}`);
  const container = containerFor(output);
  if (!container) throw new UsageError(`${output}: the output must end in .wav, .mp3 or .raw`);
  const captionsFormat = captionsFormatFor(values.captions);
  const text = await readText(positionals, values.file);
  if (!text.trim()) throw new UsageError(`nothing to say: give the text or --file\n\n${SAY_USAGE}`);
  const sampleRate = number('sample-rate', values['sample-rate']) ?? 24000;
  const bitRate = number('bit-rate', values['bit-rate']);
  const speed = number('speed', values.speed);
  const key = process.env.VOICEGATE_API_KEY || undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };

  const abort = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    abort.abort(new Error('interrupted'));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const server = await connect(config, values.url, key);
  let audio: AudioFile | null = null;
  let progress: Progress | null = null;
  try {
    const modelId = values.model ?? 'gepard-1.0';
    const modelResponse = await fetch(`${server.url}/models/${encodeURIComponent(modelId)}`, { headers, signal: abort.signal });
    if (!modelResponse.ok) throw await refusal(modelResponse);
    const model = (await modelResponse.json()) as { max_transcript_chars: number; default_voice: string | null };
    const voice = values.voice ?? model.default_voice ?? 'sarah';
    const pieces = splitText(text, model.max_transcript_chars);
    const format = { container, encoding: 'pcm_s16le' as const, sampleRate, ...(container === 'mp3' ? { bitRate: bitRate ?? defaultMp3BitRate(sampleRate) } : {}) };
    try {
      audio = await AudioFile.create(output, format);
    } catch (err) {
      throw new SayError((err as Error).message);
    }
    const totals: Totals = { credits: 0, usd: 0, remaining: null, billed: false };
    progress = new Progress(pieces.reduce((n, p) => n + codePoints(p), 0));
    // With captions: each piece's words, moved onto the clock of the joined audio.
    const words: CaptionWord[] = [];
    let seconds = 0;
    for (const piece of pieces) {
      const response = await fetch(`${server.url}${captionsFormat ? '/tts/captioned' : '/tts/bytes'}`, {
        method: 'POST',
        headers,
        signal: abort.signal,
        body: JSON.stringify({
          model_id: modelId,
          transcript: piece,
          voice: { mode: 'id', id: voice },
          output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: sampleRate },
          ...(speed !== undefined ? { generation_config: { speed } } : {}),
          ...(values.language ? { language: values.language } : {}),
        }),
      });
      if (!response.ok) throw await refusal(response);
      let pcm: Buffer;
      if (captionsFormat) {
        const answer = (await response.json()) as { audio: string; words: { words: string[]; start: number[]; end: number[] } };
        pcm = Buffer.from(answer.audio, 'base64');
        answer.words.words.forEach((word, i) => words.push({ word, start: seconds + answer.words.start[i], end: seconds + answer.words.end[i] }));
      } else pcm = Buffer.from(await response.arrayBuffer());
      seconds += pcm.length / 2 / sampleRate;
      await audio.append(pcm);
      const credits = response.headers.get('x-request-credits');
      if (credits !== null) {
        totals.billed = true;
        totals.credits += Number(credits);
        totals.usd += Number(response.headers.get('x-request-cost-usd') ?? 0);
        totals.remaining = response.headers.get('x-credits-remaining');
      }
      progress.advance(codePoints(piece));
    }
    await audio.commit();
    audio = null;
    progress.end();
    if (captionsFormat) await writeCaptions(values.captions!, captions(words, captionsFormat, { duration: seconds }));
    const characters = pieces.reduce((n, p) => n + codePoints(p), 0);
    const cost = totals.billed
      ? `cost ${totals.credits.toLocaleString('en-US')} credits ($${Number(totals.usd.toFixed(10))})${totals.remaining !== null ? `, ${Number(totals.remaining).toLocaleString('en-US')} credits left` : ''}`
      : 'cost 0 credits (not billed)';
    console.log(`wrote ${output}${captionsFormat ? ` and ${values.captions}` : ''}: ${characters.toLocaleString('en-US')} characters in ${pieces.length} request${pieces.length === 1 ? '' : 's'}; ${cost}`);
  } catch (err) {
    progress?.end();
    if (interrupted) {
      await audio?.discard(values['keep-partial'] ?? false);
      console.error(values['keep-partial'] && audio ? `interrupted; kept the audio so far in ${output}` : 'interrupted; nothing written');
      process.exitCode = 130;
      return;
    }
    await audio?.discard(values['keep-partial'] ?? false);
    if (err instanceof TypeError && !(err instanceof SayError)) throw new SayError(`cannot reach ${server.url}: ${(err as Error & { cause?: Error }).cause?.message ?? err.message}`);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await server.close();
  }
}

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];

/** A word for a shell: as it is when nothing in it needs quoting, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replace(/'/gu, `'\\''`)}'`;
}

/** The command that takes up `id` again (follow and download), with the server and config of this run. */
function resumeCommand(id: string, output: string, values: Values): string {
  const words = ['voicegate', 'say', '--job-id', id, '-o', output];
  if (values.url) words.push('--url', values.url);
  if (values.config) words.push('--config', values.config);
  return words.map(shellWord).join(' ');
}

/** The `output_format` of a job whose result goes to a file of this container (as the non-job path encodes it). */
function jobFormat(container: 'wav' | 'mp3' | 'raw', sampleRate: number, bitRate: number | undefined): Record<string, unknown> {
  if (container === 'mp3') return { container, sample_rate: sampleRate, bit_rate: bitRate ?? defaultMp3BitRate(sampleRate) };
  return { container, encoding: 'pcm_s16le', sample_rate: sampleRate };
}

/** `--job`, `--job-id` and `--cancel`: speak through a long-form job on the server. */
async function runJob(config: Config, values: Values, positionals: string[]): Promise<void> {
  const jobId = values['job-id'];
  if (values.job && jobId !== undefined) throw new UsageError(`give --job (a new job) or --job-id (one already submitted), not both\n\n${SAY_USAGE}`);
  if (values.cancel && jobId === undefined) throw new UsageError(`--cancel needs --job-id <id>\n\n${SAY_USAGE}`);
  if (jobId !== undefined && (positionals.length || values.file !== undefined)) throw new UsageError('--job-id follows a job already submitted: give no text');
  const output = values.output;
  if (!output && !values.cancel) throw new UsageError(`say needs -o <file>\n\n${SAY_USAGE}`);
  const container = output ? containerFor(output) : null;
  if (output && !container) throw new UsageError(`${output}: the output must end in .wav, .mp3 or .raw`);
  const captionsFormat = captionsFormatFor(values.captions);
  const text = jobId === undefined ? await readText(positionals, values.file) : null;
  if (text !== null && !text.trim()) throw new UsageError(`nothing to say: give the text or --file\n\n${SAY_USAGE}`);
  const sampleRate = number('sample-rate', values['sample-rate']) ?? 24000;
  const bitRate = number('bit-rate', values['bit-rate']);
  const speed = number('speed', values.speed);
  const key = process.env.VOICEGATE_API_KEY || undefined;
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};

  const abort = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    abort.abort(new Error('interrupted'));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  // In this process, a cancel needs no runner (one might take up the job just to drop it).
  const server = await connect(config, values.url, key, !values.cancel);
  const client = new JobClient(server.url, headers);
  let id = jobId ?? null;
  let finished: JobView | null = null;
  // Set from the follow's callback: typed so that TypeScript does not take it as always null here.
  let progress = null as Progress | null;
  try {
    if (values.cancel) {
      const job = await client.get(jobId!, abort.signal);
      if (job.status === 'cancelled') return console.log(`job ${job.id} was already cancelled`);
      if (FINISHED_STATUSES.has(job.status)) throw new SayError(`job ${job.id} has already ${job.status}; there is nothing to cancel`);
      const left = await client.cancel(job.id, abort.signal);
      console.log(left ? `cancelled job ${job.id} (nothing is charged)` : `job ${job.id} had just finished; it is removed with its audio`);
      return;
    }
    if (id === null) {
      const modelId = values.model ?? 'gepard-1.0';
      const modelResponse = await fetch(`${server.url}/models/${encodeURIComponent(modelId)}`, { headers, signal: abort.signal });
      if (!modelResponse.ok) throw await refusal(modelResponse);
      const model = (await modelResponse.json()) as { default_voice: string | null };
      // The submit runs to its answer even on Ctrl-C, so a job made is never one whose id is lost.
      const submitted = await client.submit(
        {
          model_id: modelId,
          transcript: text,
          voice: { mode: 'id', id: values.voice ?? model.default_voice ?? 'sarah' },
          output_format: jobFormat(container!, sampleRate, bitRate),
          ...(speed !== undefined ? { generation_config: { speed } } : {}),
          ...(values.language ? { language: values.language } : {}),
        },
        randomUUID(),
      );
      id = submitted.id;
      console.error(`job ${id} queued (resume with --job-id ${id})`);
      abort.signal.throwIfAborted();
    }
    const audioNote = (job: JobView) => `${job.progress.audio_seconds.toFixed(1)} s of audio`;
    const job = await client.follow(id, abort.signal, (update) => {
      if (!progress && update.output_format.container !== container) {
        throw new SayError(`job ${update.id} makes ${update.output_format.container} audio: give -o a .${update.output_format.container} file`);
      }
      progress ??= new Progress(update.progress.segments_total, process.stderr, Boolean(process.stderr.isTTY), 'segments');
      progress.update(update.progress.segments_done, update.progress.segments_total, audioNote(update));
    });
    if (job.status === 'failed') throw new SayError(`job ${job.id} failed: ${job.error ? `${job.error.error_code}: ${job.error.message}` : 'no reason given'}`);
    if (job.status === 'cancelled') throw new SayError(`job ${job.id} was cancelled; nothing written`);
    finished = job;
    progress?.update(job.progress.segments_done, job.progress.segments_total, `${audioNote(job)}, downloading`);
    await client.download(job, output!, abort.signal);
    if (captionsFormat) {
      const response = await fetch(`${server.url}/tts/jobs/${encodeURIComponent(job.id)}/captions?format=${captionsFormat}`, { headers, signal: abort.signal });
      if (!response.ok) throw await refusal(response);
      await writeCaptions(values.captions!, await response.text());
    }
    progress?.end();
    progress = null;
    const cost = job.usd !== null ? `cost ${job.credits.toLocaleString('en-US')} credits ($${job.usd})` : 'cost 0 credits (not billed)';
    console.log(`wrote ${output}${captionsFormat ? ` and ${values.captions}` : ''}: ${job.characters.toLocaleString('en-US')} characters, ${job.result!.duration_seconds.toLocaleString('en-US')} s of audio, as job ${job.id}; ${cost}`);
  } catch (err) {
    progress?.end();
    if (interrupted) {
      if (id === null || values.cancel) console.error('interrupted; nothing written');
      else if (finished) console.error(`interrupted; job ${id} has finished, its audio stays on the server: ${resumeCommand(id, output!, values)}`);
      else if (server.local) console.error(`interrupted; job ${id} waits in the data directory, resumed by: ${resumeCommand(id, output!, values)}`);
      else console.error(`still running on the server: ${resumeCommand(id, output!, values)}`);
      process.exitCode = 130;
      return;
    }
    if (err instanceof FollowLost) throw new SayError(`${err.message}\nthe job may still be running; follow it again with: ${resumeCommand(id!, output!, values)}`);
    if (err instanceof TypeError) throw new SayError(`cannot reach ${server.url}: ${(err as Error & { cause?: Error }).cause?.message ?? err.message}`);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await server.close();
  }
}
