/**
 * @module api/cartesia/ws-session
 * One WebSocket connection to /tts/websocket: many contexts multiplexed,
 * each answered under its own `context_id`. A bad message gets an `error`
 * event (for its context when it names one) and the socket stays open.
 * Messages are handled in arrival order; caps on message size, open
 * contexts and idle time keep one client from holding resources forever.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, toApiError } from '../../errors/api-error.js';
import type { WordTiming } from '../../engines/engine.js';
import type { WebSocketConnection, WebSocketHandler } from '../../http/websocket-router.js';
import { newRequestId } from '../../http/request-id.js';
import type { Logger } from '../../log/logger.js';
import type { Services } from '../../services.js';
import { SynthesisSession } from '../../synthesis/session.js';
import { isSsml, readSsml } from '../../synthesis/ssml.js';
import { countTranscriptCharacters } from '../../synthesis/tags.js';
import { TextTurn, type TurnInput, type TurnOutput, type TurnPiece } from '../../synthesis/turn.js';
import { BATCH_CHARACTERS } from '../../synthesis/turn-billing.js';
import { chunkEvent, errorEvent, doneEvent, eventJson, flushDoneEvent, markTimestampsEvent, timestampsEvent, type StreamEvent } from './events.js';
import { parseCartesiaBody } from './parse.js';

const RECENT_CONTEXTS = 1024;
/** Close code for an idle connection (private-use range). */
export const IDLE_CLOSE_CODE = 4000;

/** The `context_id` of a message, if it is a JSON object that names a valid one. */
function contextIdIn(text: string): string | null {
  try {
    const id = (JSON.parse(text) as Record<string, unknown> | null)?.context_id;
    return typeof id === 'string' && id.length > 0 && id.length <= 256 ? id : null;
  } catch {
    return null;
  }
}

export class WebSocketSession implements WebSocketHandler, TurnOutput {
  private readonly contexts = new Map<string, TextTurn>();
  private readonly recentlyEnded = new Set<string>();
  private draining = false;
  readonly log: Logger;

  constructor(
    private readonly connection: WebSocketConnection,
    private readonly services: Services,
  ) {
    this.log = connection.log;
    connection.idleClose = { code: IDLE_CLOSE_CODE, reason: '' };
  }

  private get options() {
    return this.connection.options;
  }

  /** Resolves true once the event has been written to the socket, false when it is not open. */
  send(event: StreamEvent): Promise<boolean> {
    return this.connection.send(eventJson(event));
  }

  // TurnOutput: a turn's results as Cartesia events.
  async piece(turn: TextTurn, piece: TurnPiece): Promise<boolean> {
    if (piece.marks) await this.send(markTimestampsEvent(turn.id, piece.marks));
    if (piece.audio.length > 0 && !(await this.send(chunkEvent(turn.id, piece.audio, piece.stepTime)))) return false;
    if (piece.words) await this.send(timestampsEvent(turn.id, piece.words));
    return true;
  }

  async words(turn: TextTurn, words: WordTiming[]): Promise<void> {
    await this.send(timestampsEvent(turn.id, words));
  }

  async flushed(turn: TextTurn, id: number | string): Promise<void> {
    await this.send(flushDoneEvent(turn.id, id));
  }

  async done(turn: TextTurn): Promise<void> {
    await this.send(doneEvent(turn.id, turn.servedModel));
  }

  async failed(turn: TextTurn, error: ApiError): Promise<void> {
    await this.send(errorEvent(turn.id, error, turn.requestId));
  }

  ended(context: TextTurn): void {
    if (this.contexts.get(context.id) === context) this.contexts.delete(context.id);
    this.recentlyEnded.add(context.id);
    if (this.recentlyEnded.size > RECENT_CONTEXTS) this.recentlyEnded.delete(this.recentlyEnded.values().next().value!);
    this.connection.touch();
  }

  /** Open contexts (for draining and tests). */
  openContexts(): number {
    return this.contexts.size;
  }

  busy(): boolean {
    return this.contexts.size > 0;
  }

  /** Contexts are turns: one is open until its last transcript has been spoken (or it is cancelled). */
  inTurn(): boolean {
    return this.contexts.size > 0;
  }

  /** Shutdown: accept no new contexts; open ones finish (the router closes the socket after them). */
  drain(): void {
    this.draining = true;
  }

  async binary(): Promise<void> {
    await this.reject(null, new ApiError('invalid_message', { reason: 'binary frames are not accepted; send JSON text messages' }));
  }

  private async reject(contextId: string | null, error: ApiError, requestId = newRequestId()): Promise<void> {
    await this.send(errorEvent(contextId, error, requestId));
  }

  async message(text: string, size: number): Promise<void> {
    if (size > this.options.maxMessageBytes) {
      // Answered under its context when it names one (below the hard cap it can still be read), so a
      // client waiting on that context sees its turn end instead of waiting for it.
      const error = new ApiError('payload_too_large', { limit: this.options.maxMessageBytes });
      const contextId = contextIdIn(text);
      const open = contextId ? this.contexts.get(contextId) : undefined;
      return open ? open.fail(error) : this.reject(contextId, error);
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (err) {
      return this.reject(null, new ApiError('invalid_json', { reason: `; ${(err as Error).message}` }));
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      return this.reject(null, new ApiError('invalid_json', { reason: '' }));
    }
    const fields = message as Record<string, unknown>;
    const given = fields.context_id;
    if (given !== undefined && given !== null && (typeof given !== 'string' || given.length === 0 || given.length > 256)) {
      return this.reject(null, new ApiError('invalid_message', { reason: 'context_id must be a string of 1–256 characters' }));
    }
    const contextId = (given as string | undefined) ?? null;

    if (fields.cancel === true) {
      if (!contextId) return this.reject(null, new ApiError('invalid_message', { reason: 'cancel needs a context_id' }));
      const context = this.contexts.get(contextId);
      if (context) context.cancel();
      else if (!this.recentlyEnded.has(contextId)) await this.reject(contextId, new ApiError('context_not_found', { id: contextId }));
      return;
    }

    const existing = contextId ? this.contexts.get(contextId) : undefined;
    if (existing) return this.continueContext(existing, fields);
    return this.openContext(contextId ?? randomUUID(), fields);
  }

  private input(fields: Record<string, unknown>, maxChars: number): TurnInput {
    const transcript = fields.transcript ?? '';
    if (typeof transcript !== 'string') throw new ApiError('missing_transcript');
    const type = fields.transcript_type ?? undefined;
    if (type !== undefined && type !== 'text' && type !== 'ssml') throw new ApiError('invalid_message', { reason: 'transcript_type must be text or ssml' });
    // An SSML message is a whole document: read (and refused if it cannot be) before it is billed.
    const ssml = transcript.trim() !== '' && isSsml(transcript, type);
    const characters = ssml ? readSsml(transcript).characters : countTranscriptCharacters(transcript);
    if (characters > maxChars) throw new ApiError('input_too_long', { count: characters, max: maxChars });
    for (const flag of ['continue', 'flush'] as const) {
      if (fields[flag] !== undefined && fields[flag] !== null && typeof fields[flag] !== 'boolean') {
        throw new ApiError('invalid_message', { reason: `${flag} must be a boolean` });
      }
    }
    const delay = fields.max_buffer_delay_ms ?? this.options.maxBufferDelayMs;
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0 || delay > 5000) {
      throw new ApiError('invalid_message', { reason: 'max_buffer_delay_ms must be a number from 0 to 5000' });
    }
    const flushId = fields.flush_id ?? undefined;
    if (flushId !== undefined && !(typeof flushId === 'number' && Number.isFinite(flushId)) && !(typeof flushId === 'string' && flushId.length <= 256)) {
      throw new ApiError('invalid_message', { reason: 'flush_id must be a number or a string of at most 256 characters' });
    }
    return { transcript, ssml, characters, continue: fields.continue === true, flush: fields.flush === true, flushId, maxBufferDelayMs: delay };
  }

  private async continueContext(context: TextTurn, fields: Record<string, unknown>): Promise<void> {
    try {
      await context.accept(this.input(fields, context.model.maxTranscriptChars));
    } catch (err) {
      context.fail(toApiError(err));
    }
  }

  private async openContext(contextId: string, fields: Record<string, unknown>): Promise<void> {
    const session = new SynthesisSession({
      services: this.services,
      transport: 'websocket',
      requestId: newRequestId(),
      signal: this.connection.signal,
      connectionId: this.connection.requestId,
    });
    session.useCaller(this.connection.authenticated!);
    try {
      if (this.draining) throw new ApiError('not_ready');
      const input = parseCartesiaBody(fields, { alwaysStreaming: true, message: true });
      const turn = this.input(fields, Number.MAX_SAFE_INTEGER);
      // An empty or blank final message for a context that is not open (never opened, or already
      // done) has nothing to speak: it ends at once, admitting and charging nothing.
      if (!turn.transcript.trim() && !turn.continue && !turn.flush) {
        await this.send(doneEvent(contextId));
        return void (await session.end());
      }
      if (this.contexts.size >= this.options.maxContexts) throw new ApiError('too_many_contexts', { max: this.options.maxContexts });
      // The turn is admitted without its text: the message's text is read once, by the turn that speaks it.
      const synthesis = await session.admit({ ...input, transcript: '', contextId }, 'tts.websocket', { reserveCharacters: BATCH_CHARACTERS, allowEmptyTranscript: true });
      if (synthesis.format.container !== 'raw') {
        throw new ApiError('invalid_output_format', { reason: 'the WebSocket sends raw audio: use container raw' });
      }
      const max = synthesis.model.maxTranscriptChars;
      if (turn.characters > max) throw new ApiError('input_too_long', { count: turn.characters, max });
      const context = new TextTurn(contextId, session, this, this.options.contextTimeoutMs);
      this.contexts.set(contextId, context);
      await context.accept(turn);
    } catch (err) {
      const error = session.fail(err);
      await session.end();
      if (this.connection.signal.aborted) return;
      if (error.status >= 500) this.log.error({ err, context_id: contextId }, 'websocket context failed to open');
      await this.reject(contextId, error, session.requestId);
    }
  }

  closed(): void {
    // Every turn, open or still being admitted, sees the connection's signal at once and stops generating and billing.
    for (const context of [...this.contexts.values()]) context.cancel();
  }
}
