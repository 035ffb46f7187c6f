/**
 * @module api/wyoming/connection
 * One Wyoming connection: events read in arrival order, each request decoded
 * into the neutral input and spoken as a streaming-text turn opened by the
 * core (`synthesis/open-turn.ts`) in its own synthesis session, whose audio
 * is framed here as Wyoming events. `describe` answers `info`; `synthesize` answers one
 * `audio-start`, the `audio-chunk`s and one `audio-stop`; a stream
 * (`synthesize-start`, `-chunk`s, `-stop`) answers each clause as its own
 * `audio-start`…`audio-stop` as soon as it is complete, then
 * `synthesize-stopped`. A refused request gets an `error` event and the
 * connection stays usable; malformed framing gets one `error` and a close.
 */
import type { Socket } from 'node:net';
import { requireScope } from '../../../accounts/scopes.js';
import { ApiError, toApiError } from '../../../errors/api-error.js';
import { newRequestId } from '../../../http/request-id.js';
import type { Logger } from '../../../log/logger.js';
import type { Services } from '../../../services.js';
import { openTurn, type TurnConnection } from '../../../synthesis/open-turn.js';
import type { Caller } from '../../../synthesis/gate.js';
import type { SynthesisSession } from '../../../synthesis/session.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';
import { sliceText } from '../../../synthesis/split.js';
import { countTranscriptCharacters } from '../../../synthesis/tags.js';
import type { TextTurn, TurnInput, TurnOutput, TurnPiece } from '../../../synthesis/turn.js';
import { EventDecoder, FramingError, type WyomingEvent } from './framing.js';
import { audioChunk, audioStart, audioStop, errorEvent, infoEvent, pongEvent, synthesizeStopped } from './events.js';
import { offeredVoices, resolveVoice, type VoiceChoice } from './voices.js';

/** How long a connection whose framing broke may take to close before it is destroyed. */
const CLOSE_AFTER_ERROR_MS = 1000;
/** Events read ahead while a request is spoken; past this the socket is paused (back-pressure on the client). */
const MAX_QUEUED_EVENTS = 32;
/** How long an unfinished clause of a stream waits for more text before it is spoken. */
const STREAM_BUFFER_DELAY_MS = 3000;
/**
 * After an `error`, how long the connection waits for the client's next event before it closes.
 * Home Assistant skips `error` events and reads on until `audio-stop` or the close: the close ends
 * its wait; a client that goes on sends its next request on the same connection.
 */
export const ERROR_LINGER_MS = 2000;

export interface ConnectionOptions {
  services: Services;
  socket: Socket;
  /** The peer's address, for a key limited to some networks. */
  address: string | null;
  /** The API key the listener speaks as (null: none; accounts off). */
  apiKey: string | null;
  log: Logger;
  /** The connection's id: its requests' log lines name it. */
  id: string;
}

/** One request's output: a turn's pieces as Wyoming events. */
class RequestOutput implements TurnOutput {
  /** An `audio-start` has been sent and its `audio-stop` not yet. */
  private open = false;
  private resolveEnded!: () => void;
  /** Resolves once the turn has ended (done, failed or cancelled) and its charges are written. */
  readonly ended_: Promise<void>;
  /** The turn ended with its audio complete (not failed, not cut off). */
  completed = false;

  constructor(
    private readonly connection: WyomingConnection,
    /** A stream frames each clause apart and ends with `synthesize-stopped`; a one-shot is one group. */
    private readonly streamed: boolean,
    private readonly rate: number,
    readonly log: Logger,
  ) {
    this.ended_ = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  async piece(_turn: TextTurn, piece: TurnPiece): Promise<boolean> {
    if (piece.audio.length === 0) return this.connection.writable;
    if (!this.open) {
      this.open = true;
      this.connection.write(audioStart(this.rate));
    }
    return this.connection.write(audioChunk(this.rate, piece.audio));
  }

  async words(): Promise<void> {}

  async flushed(): Promise<void> {}

  async spoken(): Promise<void> {
    // A stream's clause is a group of its own: the listener hears each sentence as soon as it is made.
    if (this.streamed && this.open) {
      this.open = false;
      await this.connection.write(audioStop());
    }
  }

  async done(): Promise<void> {
    this.completed = true;
    if (this.streamed) {
      if (this.open) this.connection.write(audioStop());
      this.open = false;
      await this.connection.write(synthesizeStopped());
      return;
    }
    // A one-shot answers exactly one audio-start and one audio-stop, even for text with nothing to speak.
    if (!this.open) this.connection.write(audioStart(this.rate));
    this.open = false;
    await this.connection.write(audioStop());
  }

  async failed(_turn: TextTurn, error: ApiError): Promise<void> {
    await this.connection.sendError(error);
  }

  ended(turn: TextTurn): void {
    void turn.done().then(() => this.resolveEnded());
  }
}

interface OpenRequest {
  turn: TextTurn;
  output: RequestOutput;
  /** The model's per-request limit: longer text is given to the turn in pieces no longer. */
  maxPiece: number;
  characters: number;
}

/** A stream whose start was refused: its chunks are ignored until its stop (its `error` was sent). */
const REFUSED = Symbol('refused stream');

export class WyomingConnection {
  private readonly decoder: EventDecoder;
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private stream: OpenRequest | typeof REFUSED | null = null;
  /** The one-shot `synthesize` being spoken. */
  private current: OpenRequest | null = null;
  /** A synthesis (one-shot or stream) is under way. */
  private active = 0;
  private readonly closed = new AbortController();
  private broken = false;
  private draining = false;
  /** When the connection last did something (`performance.now()`). */
  lastActivity = performance.now();
  /** Closes the connection if no event follows an `error` (`ERROR_LINGER_MS`). */
  private linger: NodeJS.Timeout | null = null;

  constructor(private readonly options: ConnectionOptions) {
    const { socket } = options;
    this.decoder = new EventDecoder();
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('close', () => this.closed.abort(new Error('wyoming connection closed')));
  }

  get signal(): AbortSignal {
    return this.closed.signal;
  }

  private get services(): Services {
    return this.options.services;
  }

  /** Whether a synthesis is under way or events wait to be handled (the idle timeout and the drain wait for it). */
  get busy(): boolean {
    const stream = this.stream;
    return this.active > 0 || this.queued > 0 || (stream !== null && stream !== REFUSED && !stream.turn.isOver());
  }

  get writable(): boolean {
    const { socket } = this.options;
    return !socket.destroyed && socket.writable;
  }

  /** Writes one event; resolves true once the socket has taken it, false when the connection is gone. */
  write(parts: Buffer[]): Promise<boolean> {
    const { socket } = this.options;
    if (!this.writable) return Promise.resolve(false);
    return new Promise((resolve) => {
      socket.cork();
      for (let i = 0; i < parts.length - 1; i++) socket.write(parts[i]);
      socket.write(parts[parts.length - 1], (err) => resolve(!err));
      socket.uncork();
    });
  }

  /** Ends the connection once what was written has gone (and destroys it if the peer does not close soon). */
  end(): void {
    const { socket } = this.options;
    if (socket.destroyed) return;
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_AFTER_ERROR_MS).unref();
  }

  /** The server is leaving: no new request starts; the connection closes once the one under way has ended. */
  drain(): void {
    this.draining = true;
    if (!this.busy) this.end();
  }

  private received(chunk: Buffer): void {
    if (this.broken) return;
    this.lastActivity = performance.now();
    if (this.linger) clearTimeout(this.linger);
    this.linger = null;
    let events: WyomingEvent[];
    try {
      events = this.decoder.push(chunk);
    } catch (err) {
      const error =
        err instanceof FramingError
          ? err.code === 'payload_too_large'
            ? new ApiError('payload_too_large', { limit: err.limit })
            : new ApiError('invalid_message', { reason: `malformed Wyoming framing: ${err.message}` })
          : toApiError(err);
      return this.breakOff(error);
    }
    for (const event of events) {
      this.queued++;
      if (this.queued > MAX_QUEUED_EVENTS) this.options.socket.pause();
      this.queue = this.queue
        .then(() => (this.broken ? undefined : this.handle(event)))
        .catch((err) => this.options.log.error({ err }, 'wyoming event failed'))
        .finally(() => {
          this.queued--;
          this.lastActivity = performance.now();
          if (this.queued <= MAX_QUEUED_EVENTS / 2 && this.options.socket.isPaused()) this.options.socket.resume();
          if (this.draining && !this.busy) this.end();
        });
    }
  }

  /** The stream is out of step: one `error`, then the connection closes; whatever was under way stops. */
  private breakOff(error: ApiError): void {
    this.broken = true;
    this.options.socket.pause();
    if (this.stream && this.stream !== REFUSED) this.stream.turn.cancel();
    this.current?.turn.cancel();
    void this.write(errorEvent(error)).then(() => this.end());
  }

  private async handle(event: WyomingEvent): Promise<void> {
    switch (event.type) {
      case 'describe':
        return this.describe();
      case 'ping':
        await this.write(pongEvent(typeof event.data.text === 'string' ? event.data.text : null));
        return;
      case 'synthesize':
        // Home Assistant sends the whole text again inside a stream, for older servers: it is spoken once, by the stream.
        if (this.stream) return;
        return this.oneShot(event.data);
      case 'synthesize-start':
        return this.startStream(event.data);
      case 'synthesize-chunk':
        return this.streamChunk(event.data);
      case 'synthesize-stop':
        return this.stopStream();
      default:
        // Unknown events are ignored, as the protocol's own servers do; the connection stays usable.
        return;
    }
  }

  private async reject(err: unknown): Promise<void> {
    await this.sendError(toApiError(err));
  }

  /** An `error` answering a request; the connection closes unless the client's next event comes within `ERROR_LINGER_MS`. */
  async sendError(error: ApiError): Promise<void> {
    await this.write(errorEvent(error));
    if (this.linger) clearTimeout(this.linger);
    this.linger = setTimeout(() => {
      this.linger = null;
      if (this.queued === 0 && this.active === 0) this.end();
    }, ERROR_LINGER_MS);
    this.linger.unref();
  }

  /** The listener's caller, its key checked as it stands now (scopes, networks, expiry). */
  private async caller(session?: SynthesisSession) {
    const caller = session
      ? await session.authenticate(this.options.apiKey, this.options.address)
      : await this.services.gate.authenticate(this.options.apiKey, { token: 'tts', address: this.options.address });
    requireScope(caller, 'tts');
    return caller;
  }

  private async describe(): Promise<void> {
    try {
      const voices = await offeredVoices(this.services, await this.caller());
      await this.write(infoEvent(voices, this.services.version));
    } catch (err) {
      await this.reject(err);
    }
  }

  /** The connection as `openTurn` sees it. */
  private turnConnection(): TurnConnection {
    return {
      services: this.services,
      transport: 'wyoming',
      signal: this.closed.signal,
      connectionId: this.options.id,
      draining: () => this.draining,
      newRequestId,
      log: this.options.log,
    };
  }

  /** Opens a request: a turn as the listener's key, the voice asked for; a refusal is thrown. */
  private async open(voice: unknown, streamed: boolean): Promise<OpenRequest> {
    // What the turn's opening learns on its way: the caller its session authenticated, and the output made for the admitted rate.
    const made: { caller?: Caller; output?: RequestOutput } = {};
    const opened = await openTurn(this.turnConnection(), {
      endpoint: 'tts.wyoming',
      caller: async (session) => (made.caller = await this.caller(session)),
      request: async (): Promise<SpeechInput> => {
        const chosen = await resolveVoice(this.services, made.caller!, voiceChoice(voice));
        const engine = this.services.engines.get(chosen.model.engine);
        const rate = outputRate(engine?.sampleRate ?? 22050, chosen.model.stream.sampleRates);
        return {
          modelId: chosen.model.id,
          transcript: '',
          voiceId: chosen.voice.id,
          outputFormat: { container: 'raw', encoding: 'pcm_s16le', sampleRate: rate },
          generationConfig: undefined,
          language: chosen.language,
          streaming: true,
          wordTimestamps: false,
          contextId: null,
          pronunciationDictId: null,
        };
      },
      output: (synthesis) => (made.output = new RequestOutput(this, streamed, synthesis.format.sampleRate, this.options.log)),
      lifetimeMs: this.services.config.server.websocket.contextTimeoutMs,
    });
    if (opened.turn) return { turn: opened.turn, output: made.output!, maxPiece: opened.turn.model.maxTranscriptChars, characters: 0 };
    // Null: the connection closed while the turn opened, and nobody reads the answer.
    throw opened.refused ?? new ApiError('not_ready');
  }

  /** Gives `text` to the turn, in pieces no longer than the model's limit, each cut at a clause; `last`: no more text follows. */
  private async feed(request: OpenRequest, text: string, last: boolean): Promise<void> {
    const characters = countTranscriptCharacters(text);
    const max = this.services.config.wyoming.maxCharacters;
    if (request.characters + characters > max) throw new ApiError('input_too_long', { count: request.characters + characters, max });
    request.characters += characters;
    const pieces = characters > request.maxPiece ? sliceText(text, request.maxPiece) : [text];
    for (let i = 0; i < pieces.length; i++) {
      if (request.turn.isOver()) return;
      const final = last && i === pieces.length - 1;
      const input: TurnInput = {
        transcript: pieces[i],
        ssml: false,
        characters: pieces.length === 1 ? characters : countTranscriptCharacters(pieces[i]),
        continue: !final,
        flush: false,
        maxBufferDelayMs: STREAM_BUFFER_DELAY_MS,
      };
      await request.turn.accept(input);
    }
  }

  private async oneShot(data: Record<string, unknown>): Promise<void> {
    const text = data.text;
    if (typeof text !== 'string') return this.reject(new ApiError('invalid_message', { reason: 'synthesize needs text (a string)' }));
    const characters = countTranscriptCharacters(text);
    const max = this.services.config.wyoming.maxCharacters;
    if (characters > max) return this.reject(new ApiError('input_too_long', { count: characters, max }));
    this.active++;
    try {
      let request: OpenRequest;
      try {
        request = await this.open(data.voice, false);
      } catch (err) {
        return await this.reject(err);
      }
      this.current = request;
      try {
        await this.feed(request, text, true);
      } catch (err) {
        request.turn.fail(toApiError(err));
      }
      await request.output.ended_;
    } finally {
      this.current = null;
      this.active--;
    }
  }

  private async startStream(data: Record<string, unknown>): Promise<void> {
    if (this.stream) return this.reject(new ApiError('invalid_message', { reason: 'a stream is already open on this connection; send synthesize-stop first' }));
    this.active++;
    try {
      this.stream = await this.open(data.voice, true);
    } catch (err) {
      this.stream = REFUSED;
      await this.reject(err);
    } finally {
      this.active--;
    }
  }

  private async streamChunk(data: Record<string, unknown>): Promise<void> {
    const stream = this.stream;
    if (!stream || stream === REFUSED) return;
    const text = data.text;
    if (typeof text !== 'string') return this.reject(new ApiError('invalid_message', { reason: 'synthesize-chunk needs text (a string)' }));
    try {
      await this.feed(stream, text, false);
    } catch (err) {
      stream.turn.fail(toApiError(err));
    }
  }

  private async stopStream(): Promise<void> {
    const stream = this.stream;
    if (!stream) {
      // A stop with no stream open has nothing to speak.
      await this.write(synthesizeStopped());
      return;
    }
    this.active++;
    try {
      if (stream !== REFUSED) {
        await stream.turn.accept(endOfInput());
        await stream.output.ended_;
      }
      // A stream that failed (its `error` was sent) still ends with `synthesize-stopped`, which a streaming client waits for.
      if (stream === REFUSED || !stream.output.completed) await this.write(synthesizeStopped());
    } finally {
      this.stream = null;
      this.active--;
    }
  }

  /** The connection has closed: whatever was under way stops, charged only what it delivered. */
  closedNow(): void {
    if (this.linger) clearTimeout(this.linger);
    if (this.stream && this.stream !== REFUSED) this.stream.turn.cancel();
  }
}

function endOfInput(): TurnInput {
  return { transcript: '', ssml: false, characters: 0, continue: false, flush: false, maxBufferDelayMs: 0 };
}

/** `synthesize`'s `voice` as a choice: a name (which overrides the language, as the protocol says), else a language. */
function voiceChoice(voice: unknown): VoiceChoice {
  if (voice === undefined || voice === null) return {};
  if (typeof voice !== 'object' || Array.isArray(voice)) throw new ApiError('invalid_message', { reason: 'voice must be an object with name, language or speaker' });
  const { name, language } = voice as Record<string, unknown>;
  if (name !== undefined && name !== null && typeof name !== 'string') throw new ApiError('invalid_message', { reason: 'voice.name must be a string' });
  if (language !== undefined && language !== null && typeof language !== 'string') throw new ApiError('invalid_message', { reason: 'voice.language must be a string' });
  const choice: VoiceChoice = {};
  if (name) choice.name = name;
  else if (language) choice.language = language;
  return choice;
}

/** The engine's own rate when the model streams it (no resampling), else the nearest rate it does. */
function outputRate(engineRate: number, offered: readonly number[]): number {
  if (offered.includes(engineRate) || offered.length === 0) return engineRate;
  return [...offered].sort((a, b) => Math.abs(a - engineRate) - Math.abs(b - engineRate))[0];
}
