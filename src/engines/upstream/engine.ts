/**
 * @module engines/upstream/engine
 * What both remote engines share: choosing a server from the pool, the time
 * limit, one retry on another server when a request fails before any audio
 * was produced (never after), aborting the upstream request when the client
 * goes away, and mapping every failure to a registry code without leaking
 * the server's address or credentials.
 */
import { ApiError } from '../../errors/api-error.js';
import type { Logger } from '../../log/logger.js';
import type { Voice } from '../../voices/voice.js';
import type { Engine, EngineChunk, EngineInfo, EngineInput } from '../engine.js';
import { UpstreamPool, type Upstream, type UpstreamConfig } from './pool.js';

export interface UpstreamEngineOptions {
  id: string;
  upstreams: UpstreamConfig[];
  model: string;
  sampleRate: number;
  voices: Record<string, string>;
  passVoiceIds: boolean;
  timeoutMs: number;
  healthPath: string;
  probeIntervalMs: number;
  ejectAfterFailures: number;
  logger: Logger;
  /** The headers that carry a server's key in this dialect (default `Authorization: Bearer`). */
  auth?: (apiKey: string) => Record<string, string>;
}

/** A failure of the connection itself, before any response arrived. */
const CONNECTION_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENOTFOUND: 'host not found',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** What a server's refusal said, for a fallback chain and a circuit breaker (synthesis/fallback): its status and Retry-After. */
export interface UpstreamRefusal {
  upstreamStatus: number;
  /** A 429's or 503's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
}

function refusal(error: ApiError, response: Response): ApiError & UpstreamRefusal {
  const header = response.headers.get('retry-after');
  const seconds = header === null ? NaN : Number(header);
  const date = header === null || Number.isFinite(seconds) ? NaN : Date.parse(header);
  const retryAfterMs = Number.isFinite(seconds) ? seconds * 1000 : Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
  // Not enumerable: never part of what is logged or rendered.
  Object.defineProperty(error, 'upstreamStatus', { value: response.status });
  if (retryAfterMs !== undefined) Object.defineProperty(error, 'retryAfterMs', { value: retryAfterMs });
  return error as ApiError & UpstreamRefusal;
}

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code ?? (err as { code?: string }).code;
}

export abstract class UpstreamEngine implements Engine {
  abstract readonly type: string;
  readonly loudness = { keep: true } as const;
  readonly id: string;
  readonly sampleRate: number;
  protected readonly pool: UpstreamPool;
  private started = false;

  constructor(protected readonly options: UpstreamEngineOptions) {
    this.id = options.id;
    this.sampleRate = options.sampleRate;
    this.pool = new UpstreamPool(options.upstreams, {
      healthPath: options.healthPath,
      probeIntervalMs: options.probeIntervalMs,
      ejectAfterFailures: options.ejectAfterFailures,
      logger: options.logger,
      engineId: options.id,
      ...(options.auth ? { auth: options.auth } : {}),
    });
  }

  /** Sends the request in this engine's dialect; the response's body is read by `read`. */
  protected abstract send(upstream: Upstream, input: EngineInput, voice: string, signal: AbortSignal): Promise<Response>;

  /** Streams the response body as engine chunks; throws ApiError for a body that is not audio. */
  protected abstract read(response: Response, input: EngineInput): AsyncIterable<EngineChunk>;

  async start(): Promise<void> {
    await this.pool.start();
    this.started = true;
  }

  async stop(): Promise<void> {
    this.pool.stop();
    this.started = false;
  }

  /** Started engines are ready; whether a server is healthy is reported by `info().upstreams`. */
  isReady(): boolean {
    return this.started;
  }

  supportsVoice(voice: Voice): boolean {
    return this.options.passVoiceIds || voice.id in this.options.voices || this.profileVoice(voice) !== undefined;
  }

  private profileVoice(voice: Voice): string | undefined {
    const profile = voice.profiles[this.type] as { voice?: unknown } | undefined;
    return typeof profile?.voice === 'string' ? profile.voice : undefined;
  }

  info(): EngineInfo {
    return {
      id: this.id,
      type: this.type,
      sampleRate: this.sampleRate,
      ready: this.isReady(),
      upstreams: {
        healthy: this.pool.healthyCount(),
        total: this.pool.upstreams.length,
        // Base URLs as configured (never the API key); the metrics strip any credentials or query.
        servers: this.pool.upstreams.map((upstream) => ({ url: upstream.url, healthy: upstream.healthy })),
      },
    };
  }

  protected error(code: 'upstream_error', reason: string): ApiError {
    return new ApiError(code, { model: this.options.model, reason });
  }

  /** The body of an answer that should be audio; an error page in JSON or text (a proxy's, say) is refused, not played. */
  protected async audioBody(response: Response): Promise<ReadableStream<Uint8Array>> {
    const type = response.headers.get('content-type') ?? '';
    if (/json|text\//i.test(type)) {
      await response.body?.cancel().catch(() => undefined);
      throw this.error('upstream_error', `the server answered ${type.split(';')[0]} instead of audio`);
    }
    if (!response.body) throw this.error('upstream_error', 'the response has no body');
    return response.body;
  }

  async *synthesize(input: EngineInput, signal: AbortSignal): AsyncGenerator<EngineChunk> {
    const voice = this.options.voices[input.voice.id] ?? this.profileVoice(input.voice) ?? input.voice.id;
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    let failedOn: Upstream | undefined;
    let lastError: ApiError | undefined;
    for (let attempt = 1; ; attempt++) {
      const upstream = this.pool.acquire(failedOn);
      if (upstream === 'offline') throw lastError ?? new ApiError('model_offline', { model: this.options.model }, { 'retry-after': '5' });
      if (upstream === 'busy') throw lastError ?? new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
      const request = new AbortController();
      const abort = () => request.abort();
      signal.addEventListener('abort', abort);
      deadline.addEventListener('abort', abort);
      let produced = false;
      let outcome: 'ok' | 'failed' | 'neutral' = 'neutral';
      let responded = false;
      try {
        const response = await this.send(upstream, input, voice, request.signal);
        responded = true;
        if (!response.ok) {
          await response.body?.cancel().catch(() => undefined);
          throw refusal(this.error('upstream_error', `the server answered HTTP ${response.status}`), response);
        }
        for await (const chunk of this.read(response, input)) {
          produced = true;
          yield chunk;
        }
        outcome = 'ok';
        return;
      } catch (err) {
        if (signal.aborted) throw signal.reason ?? err;
        outcome = 'failed';
        if (deadline.aborted) throw new ApiError('upstream_timeout', { model: this.options.model, seconds: Math.round(this.options.timeoutMs / 1000) });
        const error = this.classify(err, responded);
        if (produced || attempt >= 2) throw error;
        this.options.logger.warn({ engine: this.id, code: error.code }, 'upstream failed before any audio; retrying on another server');
        lastError = error;
        failedOn = upstream;
      } finally {
        signal.removeEventListener('abort', abort);
        deadline.removeEventListener('abort', abort);
        request.abort();
        this.pool.release(upstream, outcome);
      }
    }
  }

  private classify(err: unknown, responded: boolean): ApiError {
    if (err instanceof ApiError) return err;
    const code = causeCode(err);
    if (!responded) {
      return new ApiError('upstream_unavailable', { model: this.options.model, reason: (code && CONNECTION_CODES[code]) ?? 'connection failed' });
    }
    return this.error('upstream_error', 'the response broke off');
  }
}
