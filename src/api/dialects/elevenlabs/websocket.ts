/**
 * @module api/elevenlabs/websocket
 * ElevenLabs' realtime WebSockets, `/v1/text-to-speech/{voice_id}/stream-input`
 * and `/multi-stream-input`, on the server's router. The query sets the turn
 * (`model_id`, `output_format`, `language_code`, `auto_mode`,
 * `inactivity_timeout`, `apply_text_normalization`); the key comes in the
 * `xi-api-key` header or in the first message's `xi_api_key`.
 *
 * Each context is one streaming-text turn of the core (`synthesis/turn`):
 * `{"text": " ", voice_settings, generation_config}` opens it, text messages
 * feed it (cut at clauses, at `chunk_length_schedule`'s lengths, at once on
 * `flush`, `try_trigger_generation` or `auto_mode`), and it ends at
 * `{"text": ""}` (stream-input) or `close_context` (multi-stream: what was
 * queued is spoken, an unfinished clause dropped). Audio goes out as
 * `{audio, alignment, normalizedAlignment}` (with `contextId` on
 * multi-stream), the alignment's times in milliseconds from where the
 * previous message's alignment ended; with `sync_alignment=true` each audio
 * message carries the characters that start in its audio (the turn holds
 * audio until they are known), none comes without audio; then exactly one `{"isFinal": true}`
 * per context, and nothing after it. `stream-input` then closes with 1000.
 * On multi-stream, `{"text": ""}` without `flush` only keeps the connection
 * alive, and `close_socket` ends every context and the connection.
 */
import { ApiError, toApiError } from '../../../errors/api-error.js';
import type { WordTiming } from '../../../engines/engine.js';
import { rawHttpResponse } from '../../../http/errors.js';
import { binaryNotAccepted, readJsonMessage, sendJson, turnConnection } from '../../../http/websocket-messages.js';
import type { UpgradeRequest, WebSocketConnection, WebSocketHandler, WebSocketRoute } from '../../../http/websocket-router.js';
import type { Logger } from '../../../log/logger.js';
import type { FormatRequest } from '../../../models/output-format.js';
import type { Services } from '../../../services.js';
import { countTranscriptCharacters } from '../../../synthesis/tags.js';
import type { TextTurn, TurnOutput, TurnPiece } from '../../../synthesis/turn.js';
import { TurnContexts } from '../../../synthesis/turn-contexts.js';
import { CharacterAligner, socketAlignment, type CharacterTimes } from './alignment.js';
import { elevenLabsError, elevenLabsStatus } from './errors.js';
import { DEFAULT_OUTPUT_FORMAT, dictionaries, modelIdOf, modelNamedOf, normalization, outputFormatFor, queryValue, voiceIdOf, voiceSettings, type ElevenLabsContext } from './parse.js';
import { elevenLabsKey } from './speech.js';

/** ElevenLabs' default `chunk_length_schedule`. */
const DEFAULT_SCHEDULE = [120, 160, 250, 290];
/** ElevenLabs' default and largest `inactivity_timeout`, seconds. */
const DEFAULT_INACTIVITY_S = 20;
const MAX_INACTIVITY_S = 180;
/** Close codes: a policy refusal (no key, a bad first message), and a server error. */
const POLICY = 1008;

/** What every context of a connection shares: read from the upgrade's query. */
interface SocketSettings {
  modelId: string;
  modelNamed: string | undefined;
  voiceId: string;
  outputFormat: FormatRequest;
  language: string | null;
  autoMode: boolean;
  normalize: boolean | undefined;
  /** `sync_alignment=true`: each audio message carries the alignment of the characters that start in it. */
  syncAlignment: boolean;
}

function flag(query: URLSearchParams, name: string): boolean {
  return queryValue(query, name) === 'true';
}

function settingsOf(request: UpgradeRequest, context: ElevenLabsContext): SocketSettings {
  const { query } = request;
  const language = queryValue(query, 'language_code');
  const modelId = modelIdOf(queryValue(query, 'model_id'), context, 'query', 'model_id');
  const modelNamed = modelNamedOf(queryValue(query, 'model_id'), context);
  return {
    modelId,
    modelNamed,
    voiceId: voiceIdOf(request.params.voice_id, context),
    // A socket streams: its formats are the model's stream formats.
    outputFormat: outputFormatFor(queryValue(query, 'output_format') || DEFAULT_OUTPUT_FORMAT, { id: modelId, named: modelNamed ?? modelId }, true, context),
    language: language ? language.toLowerCase() : null,
    autoMode: flag(query, 'auto_mode'),
    syncAlignment: flag(query, 'sync_alignment'),
    normalize: normalization(queryValue(query, 'apply_text_normalization'), 'query', 'apply_text_normalization'),
  };
}

/** One context's state beside its turn: its alignment's clock, and whether its `isFinal` has gone. */
interface Context {
  id: string | null;
  characters: CharacterAligner;
  /** Where the last alignment sent ended (seconds on the turn's clock): the next message's times count from it. */
  alignedTo: number;
  /** `sync_alignment`: where the audio sent so far ends on the turn's clock, and the characters known but not yet sent. */
  audioTo: number;
  unsent: CharacterTimes;
  /** What was spoken for the unsent characters (`normalizedAlignment`). */
  unsentSpoken: CharacterTimes;
  schedule: readonly number[];
  final: boolean;
}

/** A context's key in the connection's table: its id, stream-input's one context `''`. */
function keyOf(contextId: string | null): string {
  return contextId ?? '';
}

class ElevenLabsSocket implements WebSocketHandler, TurnOutput {
  /**
   * The connection's contexts, with those ended (a late message for one is not an error) and those
   * refused when they opened (the client was told once; its later messages for one are dropped until
   * it opens it again).
   */
  private readonly contexts: TurnContexts<Context>;
  private settings: SocketSettings | null = null;
  private closing = false;
  readonly log: Logger;

  constructor(
    private readonly connection: WebSocketConnection,
    services: Services,
    private readonly multi: boolean,
    private readonly context: ElevenLabsContext,
  ) {
    this.log = connection.log;
    this.contexts = new TurnContexts(turnConnection(connection, services));
    const inactivity = Number(queryValue(connection.request.query, 'inactivity_timeout') ?? DEFAULT_INACTIVITY_S);
    const seconds = Number.isFinite(inactivity) && inactivity > 0 ? Math.min(inactivity, MAX_INACTIVITY_S) : DEFAULT_INACTIVITY_S;
    connection.idleTimeoutMs = seconds * 1000;
    connection.idleClose = { code: POLICY, reason: `inactivity timeout: no text for ${seconds} s` };
  }

  private send(message: Record<string, unknown>): Promise<boolean> {
    return sendJson(this.connection, message, 'audio');
  }

  private withContext(context: Context, message: Record<string, unknown>): Record<string, unknown> {
    return this.multi && context.id !== null ? { ...message, contextId: context.id } : message;
  }

  /** An error message (for a context when it names one); with `close`, the connection ends with it. */
  private async error(contextId: string | null, error: ApiError, close?: number): Promise<void> {
    const { status } = elevenLabsError(error, '');
    const message: Record<string, unknown> = { error: elevenLabsStatus(error), message: error.message, code: status };
    if (this.multi && contextId !== null) message.contextId = contextId;
    await this.send(message);
    if (close) this.connection.close(close, elevenLabsStatus(error).slice(0, 120));
  }

  // TurnOutput: the turn's pieces as ElevenLabs messages.
  async piece(turn: TextTurn, piece: TurnPiece): Promise<boolean> {
    const context = this.contexts.of(turn)?.state;
    if (!context || context.final) return true;
    if (this.settings!.syncAlignment) return this.syncPiece(context, piece);
    const alignment = this.alignment(context, piece.words && piece.words.length > 0 ? context.characters.next(piece.words) : null);
    if (piece.audio.length === 0 && !alignment) return true;
    return this.send(this.withContext(context, { audio: piece.audio.length > 0 ? piece.audio.toString('base64') : null, isFinal: false, normalizedAlignment: alignment?.normalized ?? null, alignment: alignment?.characters ?? null }));
  }

  /**
   * `sync_alignment`: an audio message carries the characters that start before its audio ends (the
   * turn hands no audio before the words starting in it); characters after it wait for the next.
   */
  private syncPiece(context: Context, piece: TurnPiece): Promise<boolean> {
    if (piece.words && piece.words.length > 0) appendBoth(context, context.characters.next(piece.words));
    if (piece.audio.length === 0) return Promise.resolve(true);
    context.audioTo += piece.seconds;
    const before = context.audioTo - SAME_INSTANT_S;
    const alignment = this.alignment(context, takeBefore(context.unsent, before), takeBefore(context.unsentSpoken, before));
    return this.send(this.withContext(context, { audio: piece.audio.toString('base64'), isFinal: false, normalizedAlignment: alignment?.normalized ?? null, alignment: alignment?.characters ?? null }));
  }

  async words(turn: TextTurn, words: WordTiming[]): Promise<void> {
    const context = this.contexts.of(turn)?.state;
    if (!context || context.final || words.length === 0) return;
    const times = context.characters.next(words);
    // In sync, words known after their audio (a word more text might have continued) wait for the next audio.
    if (this.settings!.syncAlignment) return void appendBoth(context, times);
    const alignment = this.alignment(context, times);
    if (alignment) await this.send(this.withContext(context, { audio: null, isFinal: false, normalizedAlignment: alignment.normalized, alignment: alignment.characters }));
  }

  /**
   * The alignment of these characters and of what was spoken for them (`normalized_alignment`), their times
   * counted from where the last one ended; null for none.
   */
  private alignment(context: Context, times: CharacterTimes | null, normalized: CharacterTimes | undefined = times?.normalized) {
    if (!times || times.characters.length === 0) return null;
    const aligned = { characters: socketAlignment(times, context.alignedTo), normalized: socketAlignment(normalized ?? times, context.alignedTo) };
    context.alignedTo = Math.max(context.alignedTo, times.ends[times.ends.length - 1]);
    return aligned;
  }

  async flushed(): Promise<void> {
    // ElevenLabs says nothing when a flush's text has been spoken.
  }

  async done(turn: TextTurn): Promise<void> {
    const context = this.contexts.of(turn)?.state;
    if (context) await this.final(context);
  }

  async failed(turn: TextTurn, error: ApiError): Promise<void> {
    const context = this.contexts.of(turn)?.state;
    if (!context || context.final) return;
    context.final = true;
    await this.error(context.id, error, this.multi ? undefined : error.status >= 500 ? 1011 : POLICY);
  }

  ended(turn: TextTurn): void {
    if (!this.contexts.of(turn)) return;
    this.connection.touch();
    // stream-input has one context: once it is over, so is the connection.
    if (!this.multi && !this.closing) {
      this.closing = true;
      this.connection.close(1000, 'done');
    }
  }

  /** Exactly one `isFinal` per context, after its last audio (and, in sync, any characters no audio followed). */
  private async final(context: Context): Promise<void> {
    if (context.final) return;
    const rest = this.alignment(context, takeBefore(context.unsent, Infinity), takeBefore(context.unsentSpoken, Infinity));
    if (rest) await this.send(this.withContext(context, { audio: null, isFinal: false, normalizedAlignment: rest.normalized, alignment: rest.characters }));
    context.final = true;
    await this.send(this.withContext(context, { isFinal: true }));
  }

  busy(): boolean {
    return this.contexts.busy;
  }

  inTurn(): boolean {
    return this.contexts.size > 0;
  }

  async binary(): Promise<void> {
    await this.error(null, binaryNotAccepted());
  }

  closed(): void {
    this.contexts.cancelAll();
  }

  async message(text: string, bytes: number): Promise<void> {
    const read = readJsonMessage(this.connection, text, bytes);
    if (read.error) return this.error(null, read.error);
    const { fields } = read;
    try {
      await this.authenticate(fields);
    } catch (err) {
      return this.error(null, toApiError(err), POLICY);
    }
    if (this.multi && fields.close_socket === true) {
      this.contexts.cancelAll();
      this.closing = true;
      return void this.connection.close(1000, 'close_socket');
    }
    const given = this.multi ? fields.context_id : null;
    if (given !== undefined && given !== null && (typeof given !== 'string' || given.length === 0 || given.length > 256)) {
      return this.error(null, new ApiError('invalid_message', { reason: 'context_id must be a string of 1–256 characters' }));
    }
    const contextId = this.multi ? ((given as string | undefined) ?? 'default') : null;
    const key = keyOf(contextId);
    const open = this.contexts.get(key);
    // A refused context's later messages are dropped; `{"text": " "}` (the opening message) tries again.
    if (!open && this.contexts.wasRefused(key)) {
      if (fields.text !== ' ') return;
      this.contexts.forgetRefusal(key);
    }
    if (this.multi && fields.close_context === true) {
      if (open) open.turn.close();
      else if (!this.contexts.hasEnded(key)) await this.error(contextId, new ApiError('context_not_found', { id: contextId! }));
      return;
    }
    const textField = fields.text;
    if (textField !== undefined && typeof textField !== 'string') return this.error(contextId, new ApiError('invalid_message', { reason: 'text must be a string' }));
    const body = textField ?? '';
    const flush = fields.flush === true;
    if (open) return this.feed(open.turn, open.state, body, flush, fields.try_trigger_generation === true);
    // Not open: empty text (a keepalive, or a flush or end for a context that has ended) opens nothing.
    if (body === '') {
      if (!this.multi && !this.contexts.hasEnded(key)) await this.error(null, new ApiError('invalid_message', { reason: 'the first message opens the stream: send {"text": " "} with its settings' }), POLICY);
      return;
    }
    if (!this.multi && this.contexts.hasEnded(key)) return;
    return this.openContext(contextId, fields, body, flush);
  }

  /** The key from the upgrade, else from this (first) message's `xi_api_key` or `authorization`. */
  private async authenticate(fields: Record<string, unknown>): Promise<void> {
    if (this.connection.authenticated) return;
    const key = typeof fields.xi_api_key === 'string' ? fields.xi_api_key : typeof fields.authorization === 'string' ? fields.authorization.replace(/^Bearer\s+/i, '') : null;
    await this.connection.authenticate(key);
    this.settings ??= settingsOf(this.connection.request, this.context);
  }

  private async feed(turn: TextTurn, context: Context, text: string, flush: boolean, trigger: boolean): Promise<void> {
    const characters = countTranscriptCharacters(text);
    if (characters > turn.model.maxTranscriptChars) return turn.fail(new ApiError('input_too_long', { count: characters, max: turn.model.maxTranscriptChars }));
    // stream-input's empty text ends the input; multi-stream's is a keepalive unless it flushes.
    const end = !this.multi && text === '' && !flush;
    if (this.multi && text === '' && !flush) return;
    await turn.accept({
      transcript: text,
      ssml: false,
      characters,
      continue: !end,
      flush,
      maxBufferDelayMs: this.settings!.autoMode || trigger ? 0 : this.connection.options.maxBufferDelayMs,
      cutSchedule: this.settings!.autoMode ? undefined : context.schedule,
    });
  }

  private async openContext(contextId: string | null, fields: Record<string, unknown>, text: string, flush: boolean): Promise<void> {
    const context: Context = { id: contextId, characters: new CharacterAligner(), alignedTo: 0, audioTo: 0, unsent: noCharacters(), unsentSpoken: noCharacters(), schedule: DEFAULT_SCHEDULE, final: false };
    const opened = await this.contexts.open(keyOf(contextId), context, {
      endpoint: 'elevenlabs.tts.websocket',
      caller: this.connection.authenticated!,
      ...(contextId !== null ? { id: contextId } : {}),
      output: this,
      lifetimeMs: this.connection.options.contextTimeoutMs,
      request: () => {
        if (this.contexts.size >= this.context.aliases.maxContexts) throw new ApiError('too_many_contexts', { max: this.context.aliases.maxContexts });
        const settings = this.settings ?? settingsOf(this.connection.request, this.context);
        this.settings = settings;
        const speed = voiceSettings(fields.voice_settings, ['voice_settings']);
        const dicts = dictionaries(fields.pronunciation_dictionary_locators, 'pronunciation_dictionary_locators');
        context.schedule = scheduleOf(fields.generation_config);
        return {
          modelId: settings.modelId,
          ...(settings.modelNamed !== undefined ? { modelNamed: settings.modelNamed } : {}),
          transcript: '',
          voiceId: settings.voiceId,
          outputFormat: settings.outputFormat,
          generationConfig: speed.speed === undefined ? undefined : speed,
          language: settings.language,
          streaming: true,
          wordTimestamps: true,
          contextId,
          pronunciationDictId: null,
          ...(dicts ? { pronunciationDictIds: dicts } : {}),
          ...(settings.normalize === undefined ? {} : { normalize: settings.normalize }),
        };
      },
      options: () => ({ wordsWithAudio: this.settings!.syncAlignment }),
    });
    if (opened.turn) return this.feed(opened.turn, context, text, flush, false);
    // A refused context stays refused (the table remembers it): the client hears why once, not once for each message it had in flight.
    if (opened.refused) await this.error(contextId, opened.refused, this.multi ? undefined : opened.refused.status >= 500 ? 1011 : POLICY);
  }
}

/** A character starting this close to the end of a message's audio is in the next one's (the times are rounded to whole ms). */
const SAME_INSTANT_S = 0.0005;

function noCharacters(): CharacterTimes {
  return { characters: [], starts: [], ends: [], wordAt: [] };
}

function append(to: CharacterTimes, more: CharacterTimes): void {
  to.characters.push(...more.characters);
  to.starts.push(...more.starts);
  to.ends.push(...more.ends);
}

/** The characters sent and, apart, what was spoken for them (their times differ within a word). */
function appendBoth(context: Context, times: CharacterTimes): void {
  append(context.unsent, times);
  if (times.normalized) append(context.unsentSpoken, times.normalized);
}

/** The characters of `from` that start before `limit` (seconds), taken out of it. */
function takeBefore(from: CharacterTimes, limit: number): CharacterTimes {
  const count = from.starts.findIndex((start) => start >= limit);
  return take(from, count < 0 ? from.starts.length : count);
}

/** The first `count` characters of `from`, taken out of it. */
function take(from: CharacterTimes, count: number): CharacterTimes {
  return { characters: from.characters.splice(0, count), starts: from.starts.splice(0, count), ends: from.ends.splice(0, count), wordAt: [] };
}

/** `generation_config.chunk_length_schedule`: lengths of 50–500 characters (ElevenLabs' bounds); absent: its default. */
function scheduleOf(config: unknown): readonly number[] {
  const schedule = (config as { chunk_length_schedule?: unknown } | null | undefined)?.chunk_length_schedule;
  if (!Array.isArray(schedule) || schedule.length === 0) return DEFAULT_SCHEDULE;
  if (!schedule.every((n) => typeof n === 'number' && n >= 50 && n <= 500)) {
    throw new ApiError('invalid_message', { reason: 'generation_config.chunk_length_schedule must be a list of numbers from 50 to 500' });
  }
  return schedule as number[];
}

/** A refused upgrade, in ElevenLabs' error shape. */
function refusal(error: ApiError, requestId: string): string {
  const { body, status } = elevenLabsError(error, requestId);
  return rawHttpResponse(status, 'application/json; charset=utf-8', JSON.stringify(body), requestId, error.headers);
}

export function elevenLabsWebSockets(services: Services): WebSocketRoute[] {
  const context: ElevenLabsContext = { aliases: services.config.elevenlabs, models: services.models };
  return (['stream-input', 'multi-stream-input'] as const).map((name) => ({
    path: `/v1/text-to-speech/:voice_id/${name}`,
    credential: (request) => elevenLabsKey(request.headers),
    credentialInMessage: true,
    // The query is read before the upgrade: a bad model or format id is refused as an HTTP error.
    check: (request) => {
      try {
        settingsOf(request, context);
        return null;
      } catch (err) {
        return toApiError(err);
      }
    },
    refusal: (error, requestId) => refusal(error, requestId),
    open: (connection) => new ElevenLabsSocket(connection, services, name === 'multi-stream-input', context),
  }));
}
