/**
 * @module synthesis/fallback
 * A model's fallback chain (`models.<id>.fallback`) and its engines'
 * circuit breakers, for every transport at once: the session runs each
 * request's pipeline through `FallbackChain.run`. The next model serves
 * when the current one has no healthy server, refuses (429, 5xx), makes no
 * first audio within `firstAudioTimeoutMs`, cannot connect, or its breaker
 * is open. It moves on only while nothing has reached the client (a whole
 * clip: until the clip is complete); a stream cut after its first audio
 * ends as it ends without a chain. A model that cannot serve the request
 * (format, rate, voice) is skipped; a client's error ends the chain.
 */
import { ApiError } from '../errors/api-error.js';
import type { Engine } from '../engines/engine.js';
import { diagnostics, publish } from './diagnostics.js';
import { synthesizeAudio, type AudioPiece } from './pipeline.js';
import type { SynthesisRequest } from './request.js';
import { resolveSpeech, type ResolveContext } from './resolve.js';
import type { SpeechInput } from './speech-input.js';

/** Why a chain moved on: the `reason` of `voicegate_fallbacks_total`. */
export type FallbackReason = 'offline' | 'refused' | 'rate_limited' | 'timeout' | 'connect_error' | 'breaker_open';

/** Why a failure may be served by the next model; null: it may not (the client's fault, or ours). */
export function fallbackReason(err: unknown): FallbackReason | null {
  if (!(err instanceof ApiError)) return null;
  switch (err.code) {
    case 'model_offline':
    case 'engine_unavailable':
      return 'offline';
    case 'upstream_unavailable':
      return 'connect_error';
    case 'upstream_timeout':
      return 'timeout';
    case 'upstream_error': {
      const status = (err as { upstreamStatus?: number }).upstreamStatus;
      if (status === 429) return 'rate_limited';
      // A 4xx other than 429 is a request the server will refuse again, whoever asks: not a fall-over.
      return status !== undefined && status < 500 ? null : 'refused';
    }
    case 'engine_error':
      return 'refused';
    default:
      return null;
  }
}

/** A pipeline pulled to its first audio (a whole clip: to its end): the pieces so far, and whether it ended. */
interface Opening {
  held: AudioPiece[];
  done: boolean;
}

async function opening(source: AsyncGenerator<AudioPiece>, whole: boolean): Promise<Opening> {
  const held: AudioPiece[] = [];
  for (;;) {
    const next = await source.next();
    if (next.done) return { held, done: true };
    held.push(next.value);
    if (!whole && next.value.audio.length > 0) return { held, done: false };
  }
}

/** Thrown into an attempt that made no audio in time. */
class FirstAudioTimeout extends Error {}

export interface ChainOptions {
  context: ResolveContext;
  /** The request as the client sent it: each fallback model is resolved from it. */
  input: SpeechInput;
  /** The request the session resolved and admitted (the chain's first model). */
  primary: SynthesisRequest;
}

export class FallbackChain {
  /** Fallback models resolved for this request (null: cannot serve it), each once. */
  private readonly resolved = new Map<string, Promise<SynthesisRequest | null>>();

  constructor(private readonly options: ChainOptions) {}

  /** Whether `request` goes through a chain at all: its model has fallbacks, or its engine a breaker. */
  static applies(request: SynthesisRequest, context: ResolveContext): boolean {
    return (request.model.fallback?.length ?? 0) > 0 || context.services.engines.breaker(request.engine.id) !== undefined;
  }

  /**
   * The pieces for `request` (the primary request or one derived from it: a clip's, a WebSocket
   * clause's) from the first model of the chain that serves it. `whole`: nothing reaches the client
   * before the end (a clip), so a failure anywhere in it may move on. `served` is told which
   * request made the audio, once, before its first piece is handed on.
   */
  async *run(request: SynthesisRequest, signal: AbortSignal, whole: boolean, served: (request: SynthesisRequest) => void): AsyncGenerator<AudioPiece> {
    const services = this.options.context.services;
    const chain = [request.model.id, ...(request.model.fallback ?? [])];
    let lastError: unknown = null;
    for (let i = 0; i < chain.length; i++) {
      const next = chain[i + 1];
      const candidate = i === 0 ? request : await this.alternate(chain[i], request);
      if (!candidate) continue;
      const model = candidate.model.id;
      const engine = candidate.engine;
      const breaker = services.engines.breaker(engine.id);
      const permit = breaker?.admit() ?? 'pass';
      if (permit === 'skip') {
        this.attempt(candidate, 'skipped', 'breaker_open', next);
        lastError ??= new ApiError('model_offline', { model }, { 'retry-after': '5' });
        continue;
      }
      const timeoutMs = next === undefined ? null : (candidate.model.firstAudioTimeoutMs ?? request.model.firstAudioTimeoutMs ?? services.engines.firstAudioTimeoutMs(engine.id));
      const attempt = new AbortController();
      const stop = () => attempt.abort(signal.reason);
      signal.addEventListener('abort', stop, { once: true });
      let timer: NodeJS.Timeout | null = timeoutMs === null ? null : setTimeout(() => attempt.abort(new FirstAudioTimeout()), timeoutMs);
      // Half-way to the limit the next model is resolved ahead, so a fall-over costs its first audio alone.
      let ahead: NodeJS.Timeout | null = timeoutMs === null ? null : setTimeout(() => void this.alternate(chain[i + 1], request), timeoutMs / 2);
      let handedOn = false;
      const held: AudioPiece[] = [];
      // Hedging: the next model too, once this one has made no audio by `hedgeAfterMs`; the first audio wins.
      const hedgeMs = i === 0 ? request.model.hedgeAfterMs : undefined;
      const hedge = hedgeMs !== undefined && next !== undefined ? { winner: candidate, launched: false } : null;
      let serving = candidate;
      // The first audio reaches the client (or the whole clip is made): this model serves, and its breaker hears of it.
      const handOn = () => {
        handedOn = true;
        serving = hedge?.winner ?? candidate;
        if (serving === candidate) breaker?.success();
        else breaker?.neutral();
        this.attempt(serving, 'served');
        served(serving);
      };
      try {
        const source = hedge ? this.hedged(candidate, next!, request, attempt.signal, whole, hedgeMs!, hedge) : synthesizeAudio(candidate, attempt.signal);
        for await (const piece of source) {
          if (attempt.signal.aborted) throw attempt.signal.reason;
          if (timer && piece.audio.length > 0) {
            clearTimeout(timer);
            clearTimeout(ahead!);
            timer = ahead = null;
          }
          held.push(piece);
          if (whole || (piece.audio.length === 0 && !handedOn)) continue;
          if (!handedOn) handOn();
          yield* held.splice(0);
        }
        if (attempt.signal.aborted) throw attempt.signal.reason;
        if (!handedOn) handOn();
        yield* held.splice(0);
        return;
      } catch (thrown) {
        if (signal.aborted) {
          breaker?.neutral();
          throw thrown;
        }
        const err = thrown instanceof FirstAudioTimeout ? new ApiError('upstream_timeout', { model, seconds: Math.round((timeoutMs ?? 0) / 100) / 10 }) : thrown;
        // After the first audio reached the client, a failure ends the stream as it would without a chain.
        if (handedOn) {
          if (fallbackReason(err)) services.engines.breaker(serving.engine.id)?.failure();
          throw err;
        }
        const reason = thrown instanceof FirstAudioTimeout ? 'timeout' : fallbackReason(err);
        if (!reason) {
          breaker?.neutral();
          this.attempt(candidate, 'failed', err instanceof ApiError ? err.code : 'internal');
          throw err;
        }
        breaker?.failure((err as { retryAfterMs?: number }).retryAfterMs);
        this.attempt(candidate, 'failed', reason, next);
        if (next !== undefined) services.logger.warn({ request_id: request.requestId, model, next, reason }, 'model failed before any audio; the next model of its chain serves');
        lastError = err;
        // The hedge ran the next model too, and it failed as well: the chain goes on after it.
        if (hedge?.launched) i++;
      } finally {
        if (timer) clearTimeout(timer);
        if (ahead) clearTimeout(ahead);
        signal.removeEventListener('abort', stop);
        if (!attempt.signal.aborted) attempt.abort();
      }
    }
    throw lastError ?? new ApiError('model_offline', { model: request.model.id }, { 'retry-after': '5' });
  }

  /**
   * Hedging: `first`'s pieces, unless it has made no audio after `afterMs`; then the next model runs
   * too, and whichever makes its first audio first (a whole clip: completes first) is the one whose
   * pieces follow (`hedge.winner`); the other is cancelled. Fails only when both fail (with the
   * first's error).
   */
  private async *hedged(
    first: SynthesisRequest,
    nextId: string,
    request: SynthesisRequest,
    signal: AbortSignal,
    whole: boolean,
    afterMs: number,
    hedge: { winner: SynthesisRequest; launched: boolean },
  ): AsyncGenerator<AudioPiece> {
    const controllers = [new AbortController(), new AbortController()];
    const stop = () => controllers.forEach((c) => c.abort(signal.reason));
    signal.addEventListener('abort', stop, { once: true });
    const sources: AsyncGenerator<AudioPiece>[] = [synthesizeAudio(first, controllers[0].signal)];
    const openings: Promise<Opening>[] = [opening(sources[0], whole)];
    openings[0].catch(() => undefined);
    let timer: NodeJS.Timeout | null = null;
    try {
      const early = await Promise.race([openings[0].then(() => true, () => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), afterMs)))]);
      let second: SynthesisRequest | null = null;
      if (!early) {
        second = await this.alternate(nextId, request);
        const breaker = second ? this.options.context.services.engines.breaker(second.engine.id) : undefined;
        if (second && (breaker?.admit() ?? 'pass') !== 'skip') {
          hedge.launched = true;
          sources.push(synthesizeAudio(second, controllers[1].signal));
          openings.push(opening(sources[1], whole));
          openings[1].catch(() => undefined);
        } else second = null;
      }
      let won: { index: number; open: Opening };
      try {
        won = await Promise.any(openings.map((open, index) => open.then((o) => ({ index, open: o }))));
      } catch {
        // Both failed: the first's failure is the chain's; the second's counts on its breaker.
        if (second) await openings[1].catch((err) => this.options.context.services.engines.breaker(second!.engine.id)?.failure((err as { retryAfterMs?: number }).retryAfterMs));
        return void (await openings[0]);
      }
      const loser = 1 - won.index;
      if (loser < openings.length) {
        controllers[loser].abort(new Error('the other model made audio first'));
        void sources[loser].return(undefined).catch(() => undefined);
      }
      if (won.index === 1) {
        hedge.winner = second!;
        this.options.context.services.engines.breaker(second!.engine.id)?.success();
        this.attempt(first, 'failed', 'timeout', nextId);
      }
      yield* won.open.held;
      if (!won.open.done) yield* sources[won.index];
    } finally {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      for (const controller of controllers) if (!controller.signal.aborted) controller.abort();
    }
  }

  private attempt(request: SynthesisRequest, outcome: 'served' | 'skipped' | 'failed', reason?: string, next?: string): void {
    publish(diagnostics.attempt, {
      instance: this.options.context.services.instanceId,
      requestId: request.requestId,
      model: request.model.id,
      engine: request.engine.id,
      outcome,
      ...(reason ? { reason } : {}),
      ...(next !== undefined ? { next } : {}),
    });
  }

  /** `request` as fallback model `id` serves it, or null when that model cannot (format, rate, voice): it is skipped. */
  private async alternate(id: string, request: SynthesisRequest): Promise<SynthesisRequest | null> {
    let found = this.resolved.get(id);
    if (!found) this.resolved.set(id, (found = this.resolve(id)));
    const fallback = await found;
    if (!fallback) return null;
    const primary = this.options.primary;
    const same = request.segments === primary.segments;
    // A derived request (a WebSocket clause) keeps its own text; its voice's gain becomes the fallback's.
    const scale = primary.voiceGain > 0 ? fallback.voiceGain / primary.voiceGain : 1;
    return {
      ...request,
      model: fallback.model,
      engine: fallback.engine,
      voice: fallback.voice,
      reference: fallback.reference,
      voiceGain: fallback.voiceGain,
      settings: fallback.settings,
      normalize: fallback.normalize,
      ...(fallback.speakers ? { speakers: fallback.speakers } : {}),
      ...(fallback.spokenLanguage ? { spokenLanguage: fallback.spokenLanguage } : {}),
      segments: same ? fallback.segments : request.segments.map((segment) => (segment.kind === 'text' ? { ...segment, gain: segment.gain * scale } : segment)),
    };
  }

  /** Resolves the client's request on fallback model `id`, with the voice it speaks: null when it cannot serve it. */
  private async resolve(id: string): Promise<SynthesisRequest | null> {
    const { context, input, primary } = this.options;
    const { models, engines, logger } = context.services;
    const model = models.get(id);
    const engine = model ? engines.get(model.engine) : undefined;
    if (!model || !engine) return null;
    const voiceId = voiceFor(engine, primary, model.defaultVoice);
    if (voiceId === null) {
      logger.warn({ request_id: primary.requestId, model: id }, 'fallback model skipped: it has no voice for the request');
      return null;
    }
    if (voiceId !== primary.voice.id) logger.info({ request_id: primary.requestId, model: id, voice: primary.voice.id, speaks_as: voiceId }, 'fallback model speaks another voice');
    try {
      return await resolveSpeech({ ...input, modelId: id, voiceId }, context);
    } catch (err) {
      logger.warn({ request_id: primary.requestId, model: id, code: err instanceof ApiError ? err.code : 'internal' }, 'fallback model skipped: it cannot serve the request');
      return null;
    }
  }
}

/** The voice a fallback engine speaks: the same id if it has it, else the chain's map's, else the model's default; null: none. */
function voiceFor(engine: Engine, primary: SynthesisRequest, defaultVoice: string | null): string | null {
  if (engine.supportsVoice(primary.voice)) return primary.voice.id;
  return primary.model.fallbackVoices?.[primary.voice.id] ?? defaultVoice;
}
