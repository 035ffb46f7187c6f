/**
 * @module api/cartesia/ws-session
 * One WebSocket connection to /tts/websocket: many contexts multiplexed,
 * each answered under its own `context_id`. A bad message gets an `error`
 * event (for its context when it names one) and the socket stays open.
 * Messages are handled in arrival order; caps on message size, open
 * contexts and idle time keep one client from holding resources forever.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, toApiError } from '../../../errors/api-error.js';
import type { WordTiming } from '../../../engines/engine.js';
import { binaryNotAccepted, readJsonMessage, sendJson, turnConnection } from '../../../http/websocket-messages.js';
import type { WebSocketConnection, WebSocketHandler } from '../../../http/websocket-router.js';
import { newRequestId } from '../../../http/request-id.js';
import type { Logger } from '../../../log/logger.js';
import type { Services } from '../../../services.js';
import { isSsml, readSsml } from '../../../synthesis/ssml.js';
import { countTranscriptCharacters } from '../../../synthesis/tags.js';
import type { TextTurn, TurnInput, TurnOutput, TurnPiece } from '../../../synthesis/turn.js';
import { TurnContexts } from '../../../synthesis/turn-contexts.js';
import { chunkEvent, errorEvent, doneEvent, flushDoneEvent, markTimestampsEvent, timestampsEvent, type StreamEvent } from './events.js';
import { parseCartesiaBody } from './parse.js';

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
  /** The connection's contexts: its turns by `context_id`, and those ended lately. */
  private readonly contexts: TurnContexts;
  readonly log: Logger;

  constructor(
    private readonly connection: WebSocketConnection,
    services: Services,
  ) {
    this.log = connection.log;
    this.contexts = new TurnContexts(turnConnection(connection, services));
    connection.idleClose = { code: IDLE_CLOSE_CODE, reason: '' };
  }

  private get options() {
    return this.connection.options;
  }

  /** Resolves true once the event has been written to the socket, false when it is not open. */
  send(event: StreamEvent): Promise<boolean> {
    return sendJson(this.connection, event, 'data');
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

  ended(): void {
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

  async binary(): Promise<void> {
    await this.reject(null, binaryNotAccepted());
  }

  private async reject(contextId: string | null, error: ApiError, requestId = newRequestId()): Promise<void> {
    await this.send(errorEvent(contextId, error, requestId));
  }

  async message(text: string, size: number): Promise<void> {
    const read = readJsonMessage(this.connection, text, size);
    const { error } = read;
    if (error && read.tooLarge) {
      // Answered under its context when it names one (below the hard cap it can still be read), so a
      // client waiting on that context sees its turn end instead of waiting for it.
      const contextId = contextIdIn(text);
      const open = contextId ? this.contexts.get(contextId) : undefined;
      return open ? open.turn.fail(error) : this.reject(contextId, error);
    }
    if (error) return this.reject(null, error);
    const { fields } = read;
    const given = fields.context_id;
    if (given !== undefined && given !== null && (typeof given !== 'string' || given.length === 0 || given.length > 256)) {
      return this.reject(null, new ApiError('invalid_message', { reason: 'context_id must be a string of 1–256 characters' }));
    }
    const contextId = (given as string | undefined) ?? null;

    if (fields.cancel === true) {
      if (!contextId) return this.reject(null, new ApiError('invalid_message', { reason: 'cancel needs a context_id' }));
      const context = this.contexts.get(contextId);
      if (context) context.turn.cancel();
      else if (!this.contexts.hasEnded(contextId)) await this.reject(contextId, new ApiError('context_not_found', { id: contextId }));
      return;
    }

    const existing = contextId ? this.contexts.get(contextId) : undefined;
    if (existing) return this.continueContext(existing.turn, fields);
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
    // The message's text, read once and given to the turn that speaks it.
    const message: { text?: TurnInput } = {};
    const opened = await this.contexts.open(contextId, undefined, {
      endpoint: 'tts.websocket',
      caller: this.connection.authenticated!,
      id: contextId,
      output: this,
      lifetimeMs: this.options.contextTimeoutMs,
      request: () => {
        const input = parseCartesiaBody(fields, { alwaysStreaming: true, message: true });
        const text = (message.text = this.input(fields, Number.MAX_SAFE_INTEGER));
        // An empty or blank final message for a context that is not open (never opened, or already
        // done) has nothing to speak: it ends at once, admitting and charging nothing.
        if (!text.transcript.trim() && !text.continue && !text.flush) return null;
        if (this.contexts.size >= this.options.maxContexts) throw new ApiError('too_many_contexts', { max: this.options.maxContexts });
        return { ...input, contextId };
      },
      admitted: (synthesis) => {
        if (synthesis.format.container !== 'raw') {
          throw new ApiError('invalid_output_format', { reason: 'the WebSocket sends raw audio: use container raw' });
        }
        const max = synthesis.model.maxTranscriptChars;
        if (message.text!.characters > max) throw new ApiError('input_too_long', { count: message.text!.characters, max });
      },
    });
    if (opened.turn) {
      try {
        return await opened.turn.accept(message.text!);
      } catch (err) {
        return opened.turn.fail(toApiError(err));
      }
    }
    if (opened.refused) return this.reject(contextId, opened.refused, opened.requestId);
    if (opened.empty) await this.send(doneEvent(contextId));
  }

  closed(): void {
    // Every turn, open or still being admitted, sees the connection's signal at once and stops generating and billing.
    this.contexts.cancelAll();
  }
}
