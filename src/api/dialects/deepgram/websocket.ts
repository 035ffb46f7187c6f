/**
 * @module api/deepgram/websocket
 * Deepgram's Aura WebSocket, `wss://…/v1/speak`, as one `TextTurn` for the
 * socket's life: `Metadata` first; `Speak` queues text (each sentence is
 * spoken once it is complete), `Flush` speaks the rest and is answered by one
 * `Flushed` after its last audio, `Clear` drops what is not yet spoken (the
 * turn's `cancelUnspoken`) and is answered by `Cleared`, `Close` speaks the
 * rest and closes 1000. Audio goes out as binary frames with no header.
 * Deepgram's limits and close codes: 1009 `BIG-0001` for a `Speak` over 2,000
 * characters, 1008 `DATA-0000` for a message that is not a known command,
 * 1003 `MESSAGE-0000` for a binary frame, a `Warning` past 20 flushes a
 * minute. The key comes in `Authorization` or as the subprotocols
 * `token, <key>` / `bearer, <token>`, of which `token` (`bearer`) is echoed.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, toApiError } from '../../../errors/api-error.js';
import { rawHttpResponse } from '../../../http/errors.js';
import { readJsonMessage, sendBinary, sendJson, turnConnection } from '../../../http/websocket-messages.js';
import type { UpgradeRequest, WebSocketConnection, WebSocketHandler, WebSocketRoute } from '../../../http/websocket-router.js';
import type { Logger } from '../../../log/logger.js';
import type { Services } from '../../../services.js';
import { openTurn } from '../../../synthesis/open-turn.js';
import { countTranscriptCharacters } from '../../../synthesis/tags.js';
import type { TextTurn, TurnOutput, TurnPiece } from '../../../synthesis/turn.js';
import { deepgramError } from './errors.js';
import { deepgramSettings, type DeepgramContext, type DeepgramInput } from './parse.js';
import { deepgramKey, modelUuid } from './speech.js';

/** Deepgram's limits on one socket. */
export const MAX_SPEAK_CHARACTERS = 2000;
export const MAX_FLUSHES_PER_MINUTE = 20;
/** Text that ends a sentence: its last mark, then perhaps closing quotes or brackets and space. */
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*\s*$/u;
/** Deepgram's time limit of a connection. */
const SOCKET_LIFETIME_MS = 60 * 60 * 1000;

/**
 * The credential of an upgrade: `Authorization: Token …` / `Bearer …`, else the subprotocols
 * `token, <key>` or `bearer, <token>` (browser-style clients, and the SDKs where a global
 * WebSocket exists), among any others the client offers.
 */
export function upgradeCredential(request: UpgradeRequest): string | null {
  const header = deepgramKey(request.headers);
  if (header) return header;
  const offered = request.headers['sec-websocket-protocol'];
  if (typeof offered !== 'string') return null;
  const protocols = offered.split(',').map((p) => p.trim());
  const at = protocols.findIndex((p) => p.toLowerCase() === 'token' || p.toLowerCase() === 'bearer');
  return at >= 0 && at + 1 < protocols.length && protocols[at + 1] ? protocols[at + 1] : null;
}

class DeepgramSocket implements WebSocketHandler, TurnOutput {
  readonly log: Logger;
  private turn: TextTurn | null = null;
  private readonly ready: Promise<void>;
  private flushes = 0;
  private clears = 0;
  private recentFlushes: number[] = [];
  private closing = false;

  constructor(
    private readonly connection: WebSocketConnection,
    private readonly services: Services,
    private readonly input: Omit<DeepgramInput, 'transcript'>,
  ) {
    this.log = connection.log;
    connection.idleClose = { code: 1011, reason: 'NET-0001' };
    const requestId = randomUUID();
    void sendJson(this.connection, { type: 'Metadata', request_id: requestId, model_name: input.aura.name, model_version: '1.0', model_uuid: modelUuid(input.aura.name) });
    this.ready = this.start();
  }

  /** The socket's one session and turn, admitted as the socket opens. */
  private async start(): Promise<void> {
    const opened = await openTurn(turnConnection(this.connection, this.services), {
      endpoint: 'deepgram.speak.websocket',
      caller: this.connection.authenticated!,
      request: () => ({ ...this.input, transcript: '' }),
      output: this,
      lifetimeMs: SOCKET_LIFETIME_MS,
      options: { flushEndsPlayback: true },
      opened: (turn) => (this.turn = turn),
    });
    if (opened.refused) this.closeWithError(opened.refused);
  }

  private closeWithError(error: ApiError): void {
    if (error.status >= 500) return this.close(1011, 'NET-0000');
    this.close(1008, deepgramError(error, '').body.err_code.slice(0, 100));
  }

  private close(code: number, reason: string): void {
    this.closing = true;
    this.connection.close(code, reason);
  }

  private send(message: Record<string, unknown>): Promise<boolean> {
    return sendJson(this.connection, message);
  }

  async message(text: string, bytes: number): Promise<void> {
    if (this.closing) return;
    const read = readJsonMessage(this.connection, text, bytes);
    if (read.error) return this.close(read.tooLarge ? 1009 : 1008, read.tooLarge ? 'BIG-0000' : 'DATA-0000');
    const { fields } = read;
    await this.ready;
    const turn = this.turn;
    if (!turn || turn.isOver() || this.closing) return;
    switch (fields.type) {
      case 'Speak': {
        if (typeof fields.text !== 'string') return this.close(1008, 'DATA-0000');
        const characters = countTranscriptCharacters(fields.text);
        if (characters > MAX_SPEAK_CHARACTERS) return this.close(1009, 'BIG-0001');
        // A Speak that ends a sentence (Pipecat sends one per sentence) is spoken at once; a word or
        // a part of one (LiveKit's) waits for the rest, up to the server's buffer delay.
        const delay = SENTENCE_END.test(fields.text) ? 0 : this.connection.options.maxBufferDelayMs;
        return turn.accept({ transcript: fields.text, ssml: false, characters, continue: true, flush: false, maxBufferDelayMs: delay });
      }
      case 'Flush': {
        const now = performance.now();
        this.recentFlushes = this.recentFlushes.filter((at) => now - at < 60_000);
        this.recentFlushes.push(now);
        if (this.recentFlushes.length > MAX_FLUSHES_PER_MINUTE) {
          const description = `More than ${MAX_FLUSHES_PER_MINUTE} flushes in 60 seconds; flush less often.`;
          await this.send({ type: 'Warning', description, code: 'FLUSH-0000', warn_code: 'FLUSH-0000', warn_msg: description });
        }
        return turn.accept({ transcript: '', ssml: false, characters: 0, continue: true, flush: true, flushId: this.flushes++, maxBufferDelayMs: 0 });
      }
      case 'Clear':
        turn.cancelUnspoken();
        await this.send({ type: 'Cleared', sequence_id: this.clears++ });
        return;
      case 'Close':
        return turn.accept({ transcript: '', ssml: false, characters: 0, continue: false, flush: false, maxBufferDelayMs: 0 });
      default:
        return this.close(1008, 'DATA-0000');
    }
  }

  async binary(): Promise<void> {
    this.close(1003, 'MESSAGE-0000');
  }

  busy(): boolean {
    return this.turn?.busy ?? true;
  }

  inTurn(): boolean {
    return this.turn?.busy ?? false;
  }

  closed(): void {
    this.turn?.cancel();
  }

  // TurnOutput: audio as binary frames, Deepgram's control messages.
  piece(_turn: TextTurn, piece: TurnPiece): Promise<boolean> {
    if (piece.audio.length === 0) return Promise.resolve(this.connection.isOpen);
    return sendBinary(this.connection, piece.audio);
  }

  async words(): Promise<void> {}

  async flushed(_turn: TextTurn, id: number | string): Promise<void> {
    await this.send({ type: 'Flushed', sequence_id: id });
  }

  async done(): Promise<void> {
    this.close(1000, '');
  }

  async failed(_turn: TextTurn, error: ApiError): Promise<void> {
    if (error.code === 'context_expired') return this.close(1011, 'NET-0003');
    this.closeWithError(error);
  }

  ended(): void {}
}

/** A refused upgrade, in Deepgram's shape, with `dg-request-id` and `dg-error`. */
function refusal(error: ApiError, requestId: string, thrown?: unknown): string {
  const id = randomUUID();
  const { status, body } = deepgramError(error, id, thrown);
  return rawHttpResponse(status, 'application/json; charset=utf-8', JSON.stringify(body), requestId, { ...error.headers, 'dg-request-id': id, 'dg-error': body.err_msg });
}

export function deepgramWebSocket(services: Services, context: DeepgramContext): WebSocketRoute {
  const settings = (request: UpgradeRequest) => deepgramSettings(request.query, true, context);
  /** The dialect's own refusal of a bad query, kept for its Deepgram wording. */
  const faults = new WeakMap<UpgradeRequest, unknown>();
  return {
    path: '/v1/speak',
    credential: upgradeCredential,
    // The query is read before the upgrade: a bad model or encoding is refused as an HTTP error.
    check: (request) => {
      try {
        settings(request);
        return null;
      } catch (err) {
        faults.set(request, err);
        return toApiError(err);
      }
    },
    refusal: (error, requestId, request) => refusal(error, requestId, faults.get(request)),
    open: (connection) => new DeepgramSocket(connection, services, settings(connection.request)),
  };
}
