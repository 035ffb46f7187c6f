/**
 * @module synthesis/session
 * One synthesis from the moment its request arrives to its release, the
 * same for every transport. The session owns, in order: the abort signal
 * (bound before anything is awaited, so a client that leaves early is seen
 * whatever step it leaves at); authentication; resolving the neutral request
 * (`resolve.ts`); admission through the gate (limits and the reservation);
 * the pipeline; the billing policy of the endpoint; the classification of
 * every failure into a registry code; and `end()`, which releases exactly
 * once and reports how the request ended. Transports decode their wire shape
 * into a `SpeechInput`, frame what comes out, and call `end()` in a
 * `finally`.
 *
 * Billing policies (docs/billing.md):
 * - `clip()`: the whole clip is made, then charged, before its first byte is sent;
 * - `stream()`: charged once the first audio has been handed to the socket;
 * - batched: a WebSocket turn charges 1,000-character batches through
 *   `reserve()` / `charge()`, driven by `turn-billing.ts`;
 * - held: a long-form job's whole cost is held when it is submitted (`admit`
 *   with `hold`), its segments are made under that hold with no admission or
 *   charge of their own (`admitSegment`), and the job's end charges the hold
 *   once (`settleHold`) or drops it (`releaseHold`), whichever server ends it.
 */
import { ApiError, toApiError } from '../errors/api-error.js';
import type { Admission, Caller, Endpoint, HeldCharge } from './gate.js';
import { diagnostics, publish, type SynthesisEnd } from './diagnostics.js';
import type { CachedAudio, CachedPiece } from '../cache/entry.js';
import type { WordTiming } from '../engines/engine.js';
import { cacheEntryOf } from './cache-entry.js';
import { clipRequest, collectClip, storedClip, synthesizeAudio, type AudioPiece } from './pipeline.js';
import type { SynthesisRequest } from './request.js';
import { resolveSpeech, type ResolveContext } from './resolve.js';
import { FallbackChain } from './fallback.js';
import { awaitMeasured, measureInBackground } from './voice-gain.js';
import type { SynthesisServices } from './services.js';
import type { SpeechInput } from './speech-input.js';

export interface SessionOptions {
  services: SynthesisServices;
  /** `job`: a segment of a long-form job, made in the background (`admitSegment`). */
  transport: 'http' | 'websocket' | 'wyoming' | 'job';
  /** Made by the server; the key of every charge this session makes. */
  requestId: string;
  /** The client's own `x-request-id`, if it sent one. */
  clientRequestId?: string | null;
  /** Fires when the client goes away (HTTP connection or WebSocket closed). */
  signal?: AbortSignal;
  /** A WebSocket turn's connection id, for the start event (its trace is the upgrade's). */
  connectionId?: string;
}

/** How `admit` admits a request (beyond its input). */
export interface AdmitSessionOptions {
  /** Characters batch 0 reserves (default: the whole transcript; a WebSocket turn's first batch). */
  reserveCharacters?: number;
  /** A WebSocket context may open with an empty transcript; HTTP requests never may. */
  allowEmptyTranscript?: boolean;
  /** The characters the request is billed for, when they are not its transcript's (a job's inputs, all of them). */
  characters?: number;
  /** The most characters the transcript may have instead of the model's limit (a job's, checked against the job's own). */
  maxCharacters?: number;
  /** Held policy: the reservation is held under `id` (a job's) and outlives the session (`settleHold`, `releaseHold`). */
  hold?: { id: string; ttlMs: number };
}

/** Held policy, at a job's end: charges the hold once (its id is the charge's key, so doing it again charges nothing). */
export function settleHold(services: SynthesisServices, charge: HeldCharge): Promise<void> {
  return services.gate.settleHeld(charge);
}

/** Held policy: drops a hold whose job failed, was cancelled or was not needed. */
export function releaseHold(services: SynthesisServices, id: string): Promise<void> {
  return services.gate.releaseHeld(id);
}

/** How a streamed response frames pieces; the transport's dialect. */
export interface StreamFraming {
  /** Frames for one piece (empty pieces may yield none). */
  piece(piece: AudioPiece): (string | Buffer)[];
  /** Frames that end a stream that succeeded; `served.model`: the model that made its audio (a fallback's after a fall-over). */
  done(served: { model: string }): (string | Buffer)[];
  /** Frames that report a failure after the stream opened; null: the transport can only cut the connection. */
  error(error: ApiError): (string | Buffer)[] | null;
}

/** Where a streamed response goes (the HTTP transports'). */
export interface FrameSink {
  /** Sends the status and headers (the cost headers known at admission); called once, before the first frame. */
  open(headers: Record<string, string>): void;
  /** Writes frames, in order and in as few writes as it can; resolves once they have been handed to the socket, rejects if the client is gone. */
  write(frames: readonly (string | Buffer)[]): Promise<void>;
  end(): void;
  /** Cuts the connection (a stream that cannot report its failure in-band). */
  destroy(): void;
}

/** A stored piece as the pipeline hands pieces on (made in no time). */
function storedPiece(piece: CachedPiece): AudioPiece {
  return piece.words ? { audio: piece.audio, words: piece.words, seconds: piece.seconds, stepTime: 0 } : { audio: piece.audio, seconds: piece.seconds, stepTime: 0 };
}

/** The abort reason once a session is over; one shared instance, since a stack trace per request costs. */
const SESSION_ENDED = Object.freeze(new Error('session ended'));

export class SynthesisSession {
  readonly requestId: string;
  readonly clientRequestId: string | null;
  /** Made when the signal is first asked for: a hit served from memory never needs one (it costs an EventTarget). */
  private controller: AbortController | null = null;
  private readonly services: SynthesisServices;
  private readonly transport: 'http' | 'websocket' | 'wyoming' | 'job';
  private readonly startedAt = performance.now();
  private caller: Caller | null = null;
  private request: SynthesisRequest | null = null;
  private endpoint: Endpoint | null = null;
  private admission: Admission | null = null;
  private firstAudioAt: number | null = null;
  private charactersCharged = 0;
  private audioSeconds = 0;
  private failure: { error: ApiError; cause: unknown } | null = null;
  private clientLeft = false;
  /** Pipelines of this session still running; only they need the abort at the end. */
  private running = 0;
  /** Removes this session's listener from the transport's signal (`options.signal`). */
  private forgetExternal: (() => void) | null = null;
  private ending: Promise<void> | null = null;
  /** The client and the model allow the audio cache for this request. */
  private cacheAllowed = false;
  /** How the audio was served: from the cache or a synthesis in flight (`hit`), made here (`miss`); null: the cache took no part. */
  cacheStatus: 'hit' | 'miss' | null = null;
  /** A hit while `cache.billHits` is off: charges are made for 0 characters. */
  private freeAudio = false;
  /** The model's fallback chain and breakers (synthesis/fallback); null: its pipeline runs alone. */
  private chain: FallbackChain | null = null;
  /** The request that made the first audio (a fallback model's, or the admitted one): what is charged and named. */
  private servedBy: SynthesisRequest | null = null;

  constructor(options: SessionOptions) {
    this.services = options.services;
    this.transport = options.transport;
    this.requestId = options.requestId;
    this.clientRequestId = options.clientRequestId ?? null;
    const external = options.signal;
    if (external) {
      if (external.aborted) this.leave();
      else {
        // A WebSocket's signal outlives its turns: the listener goes when the session ends, or each
        // turn would stay reachable from the socket until it closes.
        const onAbort = () => this.leave();
        external.addEventListener('abort', onAbort, { once: true });
        this.forgetExternal = () => external.removeEventListener('abort', onAbort);
      }
    }
    publish(diagnostics.start, {
      instance: this.services.instanceId,
      requestId: this.requestId,
      clientRequestId: this.clientRequestId,
      transport: this.transport,
      ...(options.connectionId ? { connectionId: options.connectionId } : {}),
    });
  }

  /** Aborts when the client leaves or the session ends; every engine job of this session listens to it. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.clientLeft) this.controller.abort(new Error('client disconnected'));
    }
    return this.controller.signal;
  }

  /** Whether the signal has aborted, without making one. */
  private get aborted(): boolean {
    return this.controller ? this.controller.signal.aborted : this.clientLeft;
  }

  private throwIfAborted(): void {
    if (this.controller) this.controller.signal.throwIfAborted();
    else if (this.clientLeft) throw new Error('client disconnected');
  }

  /** The client went away: generation stops at once; the end is reported as aborted. */
  leave(): void {
    this.clientLeft = true;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(new Error('client disconnected'));
  }

  get over(): boolean {
    return this.aborted || this.ending !== null;
  }

  /** The engine's load count when this request was admitted (engines with idle unload). */
  private loadsAtAdmission: number | null = null;

  get synthesis(): SynthesisRequest {
    if (!this.request) throw new Error('session not admitted');
    return this.request;
  }

  /** `credential`: the API key or access token as the transport read it (null: none); `address`: the client's, for a key limited to some networks. */
  async authenticate(credential: string | null, address: string | null = null): Promise<Caller> {
    // Every session synthesises: an access token with the tts grant will do (the tts scope is the transport's check, and admit's).
    const caller = await this.services.gate.authenticate(credential, { token: 'tts', address });
    this.useCaller(caller);
    return caller;
  }

  /** A caller authenticated earlier (a WebSocket's, at the upgrade); `admit` checks its key again. */
  useCaller(caller: Caller): void {
    this.caller = caller;
  }

  /**
   * Resolves the request and admits it: limits, and a reservation of `reserveCharacters` (default:
   * the whole transcript). A client that left while this awaited is seen here, and what was
   * admitted is released at once.
   */
  async admit(input: SpeechInput, endpoint: Endpoint, options: AdmitSessionOptions = {}): Promise<SynthesisRequest> {
    if (!this.caller) throw new Error('session has no caller');
    this.throwIfOver();
    this.endpoint = endpoint;
    const resolveStartMs = performance.now() - this.startedAt;
    const context: ResolveContext = {
      services: this.services,
      requestId: this.requestId,
      orgId: this.caller.orgId,
      allowEmptyTranscript: options.allowEmptyTranscript,
      maxCharacters: options.maxCharacters,
    };
    let request = await resolveSpeech(input, context);
    if (options.characters !== undefined) request = { ...request, characters: options.characters };
    this.request = request;
    this.useChain(input, context, request);
    // An engine that lets go of its model while idle loads it for the first request after: that request's headers say so.
    this.loadsAtAdmission = request.engine.loads?.().count ?? null;
    this.cacheAllowed = input.cache !== false && !!this.services.cache;
    this.throwIfOver();
    const resolvedMs = performance.now() - this.startedAt;
    const admission = await this.services.gate.admit(this.caller, request, {
      endpoint,
      clientRequestId: this.clientRequestId,
      reserveCharacters: options.reserveCharacters ?? request.characters,
      ...(options.hold ? { hold: options.hold } : {}),
    });
    this.admission = admission;
    if (this.over) {
      // end() may have run while the gate awaited; it could not release what it did not have yet.
      await admission.release();
      this.throwIfOver();
    }
    publish(diagnostics.admitted, {
      instance: this.services.instanceId,
      requestId: this.requestId,
      endpoint,
      orgId: this.caller.orgId,
      keyId: this.caller.keyId,
      model: request.model.id,
      engine: request.engine.id,
      voice: request.voice.id,
      characters: request.characters,
      admitMs: performance.now() - this.startedAt,
      resolveStartMs,
      resolvedMs,
    });
    return request;
  }

  /**
   * Held policy: one segment of a long-form job. The job was admitted when it was submitted and its
   * whole cost is held, so the segment passes no limit and makes no charge; it runs at background
   * priority, may be served from (and kept in) the audio cache, and publishes the session's events
   * as background work. A voice not measured yet is measured first, under the session's signal, so
   * the whole job is at one level.
   */
  async admitSegment(input: SpeechInput, job: { orgId: string; keyId: string | null }): Promise<SynthesisRequest> {
    this.throwIfOver();
    this.caller = { orgId: job.orgId, keyId: job.keyId };
    this.endpoint = 'tts.jobs';
    const resolveStartMs = performance.now() - this.startedAt;
    const context = { services: this.services, requestId: this.requestId, orgId: job.orgId, maxCharacters: Number.MAX_SAFE_INTEGER };
    let request = await resolveSpeech(input, context);
    if (await awaitMeasured(request.engine, request.voice, request.reference, this.signal)) request = await resolveSpeech(input, context);
    // A job's engine work yields to every request a listener waits for.
    request.background = true;
    this.request = request;
    this.useChain(input, context, request);
    this.cacheAllowed = input.cache !== false && !!this.services.cache;
    this.throwIfOver();
    publish(diagnostics.admitted, {
      instance: this.services.instanceId,
      requestId: this.requestId,
      endpoint: this.endpoint,
      orgId: job.orgId,
      keyId: job.keyId,
      model: request.model.id,
      engine: request.engine.id,
      voice: request.voice.id,
      characters: request.characters,
      admitMs: performance.now() - this.startedAt,
      // No admission of its own: resolving (and measuring the voice) is all of it.
      resolveStartMs,
      resolvedMs: performance.now() - this.startedAt,
      background: true,
    });
    return request;
  }

  /** A model with a fallback chain, or an engine with a breaker, runs every pipeline of this session through the chain. */
  private useChain(input: SpeechInput, context: ResolveContext, request: SynthesisRequest): void {
    this.chain = FallbackChain.applies(request, context) ? new FallbackChain({ context, input, primary: request }) : null;
  }

  /** The model that made this session's first audio; until then, the one admitted. */
  get servedModel(): string {
    return (this.servedBy ?? this.request)?.model.id ?? '';
  }

  /** `x-voicegate-model`: the model that served (after a fall-over, a fallback of the one asked for). */
  modelHeaders(): Record<string, string> {
    return this.request ? { 'x-voicegate-model': this.servedModel } : {};
  }

  /** The cost headers known at admission (what the whole request will cost, the balance after it). */
  get quote(): Record<string, string> {
    return this.admission?.quote ?? {};
  }

  /** Audio made for work nobody listens to yet (a job's segment): counted, with no time to first audio. */
  produced(seconds: number): void {
    this.audioSeconds += seconds;
  }

  /**
   * The pipeline for this session's request (or a WebSocket segment of it), stopped by the session's
   * signal. `cache`: the request is a whole response (a WebSocket turn in one message), so it may be
   * served from, and kept in, the audio cache.
   */
  pieces(request: SynthesisRequest = this.synthesis, signal: AbortSignal = this.signal, options: { cache?: boolean } = {}): AsyncGenerator<AudioPiece> {
    // Its caller may not finish it: the end's abort must reach it.
    this.running = Infinity;
    return this.source(request, signal, options.cache === true);
  }

  /**
   * `x-cache` for the response's headers once its source is known (none when the cache took no
   * part), and `x-voicegate-engine-load-ms` when the engine loaded its model for this request
   * (idle unload), whose first audio includes that load.
   */
  cacheHeaders(): Record<string, string> {
    const loads = this.request?.engine.loads?.();
    const loadMs = loads && this.loadsAtAdmission !== null && loads.count > this.loadsAtAdmission ? loads.lastMs : null;
    return { ...(this.cacheStatus ? { 'x-cache': this.cacheStatus } : {}), ...(loadMs !== null ? { 'x-voicegate-engine-load-ms': String(loadMs) } : {}) };
  }

  /**
   * Where the pieces come from: the pipeline, or, when the cache may answer, a stored entry (a hit),
   * the identical synthesis already in flight (a follower, also a hit), or a new flight this request
   * leads (a miss, kept once it completes). Every one is framed, billed and limited alike.
   */
  private async *source(request: SynthesisRequest, signal: AbortSignal, cacheable: boolean): AsyncGenerator<AudioPiece> {
    const found = await this.cached(request, cacheable);
    signal.throwIfAborted();
    if (found.entry) {
      for (const piece of found.entry.pieces) {
        signal.throwIfAborted();
        yield storedPiece(piece);
      }
      return;
    }
    yield* this.made(request, signal, found.id);
  }

  /**
   * The cache's answer for `request`: a stored entry (a hit, counted and billed as one here), or the
   * entry id a synthesis should follow or lead (null: the cache takes no part). The memory tier
   * answers without a promise; only the disk and shared tiers are waited for.
   */
  private cached(request: SynthesisRequest, cacheable: boolean): { entry: CachedAudio; id: string } | { entry: null; id: string | null } | Promise<{ entry: CachedAudio | null; id: string | null }> {
    const cache = this.services.cache;
    // A chain's audio may come from another model than the key names: it neither comes from nor goes to the cache.
    const id = cache && cacheable && this.cacheAllowed && !this.chain ? cacheEntryOf(request, this.caller?.orgId ?? null, this.services) : null;
    if (!cache || !id) return { entry: null, id: null };
    const stored = cache.store.peek(id);
    if (stored) return this.hit(stored, id);
    return cache.store.lookup(id).then((entry) => (entry ? this.hit(entry, id) : { entry: null, id }));
  }

  private hit(entry: CachedAudio, id: string): { entry: CachedAudio; id: string } {
    const cache = this.services.cache!;
    cache.store.hits++;
    this.served('hit', cache.billHits);
    return { entry, id };
  }

  /** The pieces made for `request`: by the pipeline alone (no entry id), or by the flight for `id` this request joins or leads. */
  private made(request: SynthesisRequest, signal: AbortSignal, id: string | null, whole = false): AsyncGenerator<AudioPiece> {
    if (this.chain) return this.chain.run(request, signal, whole, (served) => (this.servedBy ??= served));
    const cache = this.services.cache;
    if (!cache || !id) return synthesizeAudio(request, signal);
    const { flight, leader } = cache.store.flight(id, (flightSignal) => synthesizeAudio(request, flightSignal));
    if (leader) cache.store.misses++;
    else cache.store.followers++;
    this.served(leader ? 'miss' : 'hit', cache.billHits);
    return flight.follow(signal);
  }

  private served(status: 'hit' | 'miss', billHits: boolean): void {
    // A WebSocket turn is served once; the first answer is the turn's.
    this.cacheStatus ??= status;
    if (status === 'hit' && !billHits) this.freeAudio = true;
  }

  /**
   * Clip policy: the whole clip, charged once it exists and before any of it is sent. `timings`: the
   * clip's word timestamps come with it (the request asked for them), for a dialect that renders a
   * clip with its alignment.
   */
  async clip(options: { timings?: boolean } = {}): Promise<{ audio: Buffer; headers: Record<string, string>; words: WordTiming[]; seconds: number }> {
    const request = this.synthesis;
    const made = clipRequest(request, options.timings === true);
    const found = await this.cached(made, true);
    this.throwIfAborted();
    let clip: { audio: Buffer; seconds: number; words: WordTiming[] };
    if (found.entry) {
      const words = made.wordTimestamps ? found.entry.pieces.flatMap((piece) => piece.words ?? []) : [];
      clip = { audio: storedClip(found.entry.audio, request.format), seconds: found.entry.seconds, words };
    } else {
      this.running++;
      try {
        clip = await collectClip(this.made(made, this.signal, found.id, true), request.format);
      } finally {
        this.running--;
      }
    }
    const { audio, seconds, words } = clip;
    this.throwIfOver();
    const headers = await this.charge(0, request.characters);
    this.delivered(seconds);
    return { audio, headers: { ...headers, ...this.cacheHeaders(), ...this.modelHeaders() }, words, seconds };
  }

  /**
   * First-audio policy: pieces are framed and written as they are made; the charge is made once the
   * first audio has been handed to the socket. A failure before that is thrown (an ordinary error
   * response, nothing charged); after it, it is framed in-band or cuts the connection. A stored
   * entry's pieces are all at hand: they are framed as the miss framed them and written in as few
   * writes as the charge allows (the first audio, then the rest with the end; all at once when the
   * hit is free and so charged before it opens).
   */
  async stream(framing: StreamFraming, sink: FrameSink): Promise<void> {
    const request = this.synthesis;
    const found = await this.cached(request, true);
    this.throwIfAborted();
    if (found.entry) return this.send(found.entry.pieces.map(storedPiece), framing, sink);
    const pieces = this.made(request, this.signal, found.id);
    this.running++;
    try {
      await this.send(pieces, framing, sink);
    } finally {
      // Stops the engine job whatever happened (a failed charge included): no worker is left waiting.
      await pieces.return(undefined);
      this.running--;
    }
  }

  /** Frames and writes `pieces` (a list: all at hand, batched; otherwise each as it comes), charging as `stream()` says. */
  private async send(pieces: readonly AudioPiece[] | AsyncIterable<AudioPiece>, framing: StreamFraming, sink: FrameSink): Promise<void> {
    const request = this.synthesis;
    const atHand = Array.isArray(pieces);
    let opened = false;
    let charged = false;
    /** Frames not yet written, and the seconds of audio of the pieces they hold. */
    let frames: (string | Buffer)[] = [];
    let seconds: number[] = [];
    const flush = async () => {
      const written = seconds;
      await sink.write(frames);
      frames = [];
      seconds = [];
      for (const s of written) this.delivered(s);
    };
    try {
      for await (const piece of pieces) {
        const framed = framing.piece(piece);
        if (framed.length === 0) continue;
        if (!opened) {
          this.throwIfOver();
          // A fallback model's stream quotes that model's price.
          const served = this.servedBy && this.servedBy.model.id !== request.model.id ? this.servedBy.model : null;
          let headers = (served && this.admission?.quoteFor?.(served)) || (this.admission?.quote ?? {});
          // A free hit is charged its 0 credits before it opens: its headers say so, not the quote.
          if (this.freeAudio) {
            charged = true;
            headers = await this.charge(0, request.characters);
          }
          sink.open({ ...headers, ...this.cacheHeaders(), ...this.modelHeaders() });
          opened = true;
        }
        for (const frame of framed) frames.push(frame);
        seconds.push(piece.seconds);
        const first = !charged && piece.audio.length > 0;
        if (atHand && !first) continue;
        await flush();
        if (first) {
          charged = true;
          await this.charge(0, request.characters);
          if (atHand) this.throwIfAborted();
        }
      }
      for (const frame of framing.done({ model: this.servedModel })) frames.push(frame);
      await flush();
      sink.end();
    } catch (err) {
      if (!opened) throw err;
      const error = this.fail(err);
      const failure = this.aborted ? null : framing.error(error);
      if (!failure) return sink.destroy();
      try {
        await sink.write(failure);
        sink.end();
      } catch {
        sink.destroy();
      }
    }
  }

  /**
   * Records charge `index` for `characters`; a failure is reported and thrown as its registry code,
   * and the caller's policy ends the request: nothing more is produced for a request that could not
   * be billed.
   */
  async charge(index: number, characters: number): Promise<Record<string, string>> {
    const admission = this.admission;
    if (!admission) throw new Error('session not admitted');
    // A hit given away (`cache.billHits` off) is still recorded, as a charge of nothing.
    if (this.freeAudio) characters = 0;
    // Timed only for a listener (tracing): a charge's span.
    const began = diagnostics.charged.hasSubscribers || diagnostics.chargeFailed.hasSubscribers ? performance.now() : 0;
    try {
      const served = this.servedBy && this.servedBy.model.id !== this.request?.model.id ? this.servedBy.model : undefined;
      const headers = await admission.charge(index, characters, served);
      this.charactersCharged += characters;
      if (this.caller?.orgId && this.request && this.endpoint) {
        publish(diagnostics.charged, {
          instance: this.services.instanceId,
          requestId: this.requestId,
          endpoint: this.endpoint,
          orgId: this.caller.orgId,
          model: this.servedModel,
          index,
          characters,
          ms: began > 0 ? performance.now() - began : 0,
        });
      }
      return headers;
    } catch (err) {
      publish(diagnostics.chargeFailed, { instance: this.services.instanceId, requestId: this.requestId, endpoint: this.endpoint!, orgId: this.caller?.orgId ?? null, index, characters, error: err, ms: began > 0 ? performance.now() - began : 0 });
      throw this.fail(err);
    }
  }

  /** Reserves batch `index` of a WebSocket turn; false when the organisation's balance is used up. */
  reserve(index: number, characters: number): Promise<boolean> {
    if (!this.admission) throw new Error('session not admitted');
    return this.admission.reserve(index, characters);
  }

  /** Audio was handed to the client: the first time, that is the time to first audio. */
  delivered(seconds: number): void {
    this.audioSeconds += seconds;
    if (this.firstAudioAt !== null) return;
    this.firstAudioAt = performance.now();
    if (this.request && this.endpoint) {
      publish(diagnostics.firstAudio, { instance: this.services.instanceId, requestId: this.requestId, endpoint: this.endpoint, model: this.request.model.id, ttfaMs: this.firstAudioAt - this.startedAt, cache: this.cacheStatus });
    }
  }

  /**
   * Records how the request failed (the first failure wins) and returns it as a registry error. What
   * a departed client's abort throws is not a failure: that end is reported as aborted.
   */
  fail(err: unknown): ApiError {
    if (this.failure) return this.failure.error;
    const error = toApiError(err);
    if (this.clientLeft && !(err instanceof ApiError)) return error;
    this.failure = { error, cause: err };
    return error;
  }

  /** Releases exactly once, however the session ended, and reports the end. Safe to call again. */
  end(): Promise<void> {
    this.ending ??= this.finish();
    return this.ending;
  }

  private async finish(): Promise<void> {
    this.forgetExternal?.();
    // Aborting costs an event dispatch per request: only done while a pipeline may still run.
    if (this.running > 0 && this.controller && !this.controller.signal.aborted) this.controller.abort(SESSION_ENDED);
    try {
      await this.admission?.release();
    } catch (err) {
      this.services.logger.warn({ err, request_id: this.requestId }, 'release failed');
    }
    // A voice this engine has not measured was spoken at unity gain: it is measured now that an
    // admitted request has used it, after that request, so the measurement never delays it (voice-gain.ts).
    if (this.admission && this.request) {
      measureInBackground(this.request.engine, this.request.voice, this.request.reference);
      // A dialogue's other voices too (each voice is measured once, however often it is named).
      for (const speaker of this.request.speakers ?? []) measureInBackground(this.request.engine, speaker.voice, speaker.reference);
    }
    const failure = this.failure;
    const message: SynthesisEnd = {
      instance: this.services.instanceId,
      requestId: this.requestId,
      clientRequestId: this.clientRequestId,
      transport: this.transport,
      endpoint: this.endpoint,
      orgId: this.caller?.orgId ?? null,
      model: this.request?.model.id ?? null,
      engine: this.request?.engine.id ?? null,
      durationMs: performance.now() - this.startedAt,
      charactersCharged: this.charactersCharged,
      audioSeconds: this.audioSeconds,
      errorCode: failure?.error.code ?? null,
      // 499, as proxies log it: the client closed the request before it was answered in full.
      status: failure ? failure.error.status : this.clientLeft ? 499 : 200,
      aborted: this.clientLeft,
    };
    if (failure && failure.error.status >= 500) message.error = failure.cause;
    publish(diagnostics.end, message);
  }

  private throwIfOver(): void {
    if (this.clientLeft) throw this.controller?.signal.reason ?? new Error('client disconnected');
    if (this.ending) throw SESSION_ENDED;
  }
}
