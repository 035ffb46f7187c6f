/**
 * @module api/cartesia/ws-session
 * One WebSocket connection to /tts/websocket: many contexts multiplexed,
 * each answered under its own `context_id`. A bad message gets an `error`
 * event (for its context when it names one) and the socket stays open.
 * Messages are handled in arrival order; caps on message size, open
 * contexts and idle time keep one client from holding resources forever.
 */
import { randomUUID } from 'node:crypto';
import { WebSocket, type RawData } from 'ws';
import type { Config } from '../../config/schema.js';
import { ApiError, toApiError } from '../../errors/api-error.js';
import type { Caller } from '../../synthesis/gate.js';
import { newRequestId } from '../../http/request-id.js';
import type { Logger } from '../../log/logger.js';
import type { Services } from '../../services.js';
import { SynthesisSession } from '../../synthesis/session.js';
import { isSsml, readSsml } from '../../synthesis/ssml.js';
import { countTranscriptCharacters } from '../../synthesis/tags.js';
import { BATCH_CHARACTERS } from '../../synthesis/turn-billing.js';
import { errorEvent, doneEvent, eventJson, type StreamEvent } from './events.js';
import { parseCartesiaBody } from './parse.js';
import { TurnContext, type ContextHost, type ContextInput } from './ws-context.js';

const PING_INTERVAL_MS = 30_000;
const RECENT_CONTEXTS = 1024;
/** Close code for an idle connection (private-use range). */
export const IDLE_CLOSE_CODE = 4000;

type WebSocketOptions = Config['server']['websocket'];

/** The `context_id` of a message, if it is a JSON object that names a valid one. */
function contextIdIn(text: string): string | null {
  try {
    const id = (JSON.parse(text) as Record<string, unknown> | null)?.context_id;
    return typeof id === 'string' && id.length > 0 && id.length <= 256 ? id : null;
  } catch {
    return null;
  }
}

export class WebSocketSession implements ContextHost {
  private readonly contexts = new Map<string, TurnContext>();
  private readonly recentlyEnded = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private lastActivity = Date.now();
  private alive = true;
  private draining = false;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Aborts when the socket closes: every turn's session listens to it. */
  private readonly socketClosed = new AbortController();

  constructor(
    private readonly ws: WebSocket,
    private readonly caller: Caller,
    private readonly services: Services,
    private readonly options: WebSocketOptions,
    readonly log: Logger,
  ) {
    ws.on('message', (data, isBinary) => {
      this.lastActivity = Date.now();
      this.queue = this.queue.then(() => this.handle(data, isBinary)).catch((err) => this.log.error({ err }, 'websocket message failed'));
    });
    ws.on('pong', () => (this.alive = true));
    ws.on('close', () => this.closed());
    ws.on('error', (err) => this.log.warn({ err }, 'websocket error'));
    const idleCheck = setInterval(() => this.checkIdle(), Math.min(5000, Math.max(250, options.idleTimeoutMs / 4)));
    const ping = setInterval(() => this.ping(), PING_INTERVAL_MS);
    this.timers.push(idleCheck, ping);
    for (const timer of this.timers) timer.unref();
  }

  /**
   * Resolves once the frame has been written to the socket (true), or false when the socket is not
   * open or failed: awaiting it is the back-pressure, and its answer is what counts as delivered.
   */
  send(event: StreamEvent): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    return new Promise((resolve) => this.ws.send(eventJson(event), (err) => resolve(!err)));
  }

  ended(context: TurnContext): void {
    if (this.contexts.get(context.id) === context) this.contexts.delete(context.id);
    this.recentlyEnded.add(context.id);
    if (this.recentlyEnded.size > RECENT_CONTEXTS) this.recentlyEnded.delete(this.recentlyEnded.values().next().value!);
    this.lastActivity = Date.now();
  }

  /** Open contexts (for draining and tests). */
  openContexts(): number {
    return this.contexts.size;
  }

  /** Shutdown: accept no new contexts, let open ones finish (up to the grace period), then close. */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const deadline = Date.now() + graceMs;
    while (this.contexts.size > 0 && Date.now() < deadline && this.ws.readyState === WebSocket.OPEN) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.ws.close(1001, 'server shutting down');
  }

  private async reject(contextId: string | null, error: ApiError, requestId = newRequestId()): Promise<void> {
    await this.send(errorEvent(contextId, error, requestId));
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    if (isBinary) return this.reject(null, new ApiError('invalid_message', { reason: 'binary frames are not accepted; send JSON text messages' }));
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    const text = () => (Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
    if (size > this.options.maxMessageBytes) {
      // Answered under its context when it names one (below the hard cap it can still be read), so a
      // client waiting on that context sees its turn end instead of waiting for it.
      const error = new ApiError('payload_too_large', { limit: this.options.maxMessageBytes });
      const contextId = contextIdIn(text());
      const open = contextId ? this.contexts.get(contextId) : undefined;
      return open ? open.fail(error) : this.reject(contextId, error);
    }
    let message: unknown;
    try {
      message = JSON.parse(text());
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

  private input(fields: Record<string, unknown>, maxChars: number): ContextInput {
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

  private async continueContext(context: TurnContext, fields: Record<string, unknown>): Promise<void> {
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
      signal: this.socketClosed.signal,
    });
    session.useCaller(this.caller);
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
      const synthesis = await session.admit({ ...input, contextId }, 'tts.websocket', { reserveCharacters: BATCH_CHARACTERS, allowEmptyTranscript: true });
      if (synthesis.format.container !== 'raw') {
        throw new ApiError('invalid_output_format', { reason: 'the WebSocket sends raw audio: use container raw' });
      }
      const context = new TurnContext(contextId, session, this, this.options.contextTimeoutMs);
      this.contexts.set(contextId, context);
      await context.accept(turn);
    } catch (err) {
      const error = session.fail(err);
      await session.end();
      if (this.socketClosed.signal.aborted) return;
      if (error.status >= 500) this.log.error({ err, context_id: contextId }, 'websocket context failed to open');
      await this.reject(contextId, error, session.requestId);
    }
  }

  private checkIdle(): void {
    if (this.contexts.size > 0 || this.ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - this.lastActivity >= this.options.idleTimeoutMs) {
      this.ws.close(IDLE_CLOSE_CODE, `idle timeout: no message for ${Math.round(this.options.idleTimeoutMs / 1000)} s`);
    }
  }

  private ping(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  private closed(): void {
    for (const timer of this.timers) clearInterval(timer);
    // Every turn, open or still being admitted, sees this at once and stops generating and billing.
    this.socketClosed.abort(new Error('websocket closed'));
    for (const context of [...this.contexts.values()]) context.cancel();
  }
}
