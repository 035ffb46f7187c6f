/**
 * @module synthesis/open-turn
 * How every streaming-text turn begins, whatever its wire (a WebSocket
 * context of any dialect, a Wyoming request): a session on the connection's
 * signal, the caller, the dialect's decoding of the opening message, and
 * admission without the message's text (`allowEmptyTranscript`) with the
 * turn's first billing batch reserved (`turn-billing.ts`); then the
 * `TextTurn`, handed the dialect's output. The text itself is read once, by
 * the turn that speaks it. Whatever fails before the turn exists is recorded
 * as the session's failure and released; the dialect only renders the error
 * it is given, in its own shape.
 */
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import type { Caller, Endpoint } from './gate.js';
import type { SynthesisRequest } from './request.js';
import type { SynthesisServices } from './services.js';
import { SynthesisSession } from './session.js';
import type { SpeechInput } from './speech-input.js';
import { TextTurn, type TurnOptions, type TurnOutput } from './turn.js';
import { BATCH_CHARACTERS } from './turn-billing.js';

/** The connection a turn is opened on: what every turn of it shares. */
export interface TurnConnection {
  services: SynthesisServices;
  transport: 'websocket' | 'wyoming';
  /** Aborts when the connection closes: every turn of it stops at once. */
  signal: AbortSignal;
  /** The connection's id, for each turn's start event (its trace is the connection's). */
  connectionId: string;
  /** The server is leaving: a new turn is refused with `not_ready` (the open ones finish). */
  draining(): boolean;
  /** A new request id: each turn is a request of its own, and its id the key of its charges. */
  newRequestId(): string;
  log: Logger;
}

/** One turn to open: the dialect's side of it. */
export interface TurnOpening {
  endpoint: Endpoint;
  /** The connection's caller, or how the turn's session authenticates one (a listener's key, checked again for each turn). */
  caller: Caller | ((session: SynthesisSession) => Promise<Caller>);
  /**
   * The opening message decoded into the neutral request (its transcript is ignored). It runs in the
   * turn's session, so a refusal thrown here is the turn's failure, reported like any other. Null: the
   * message has nothing to speak and opens nothing; the session ends admitting nothing.
   */
  request(): SpeechInput | null | Promise<SpeechInput | null>;
  /** Checks of the admitted request that only the dialect makes (a container its wire cannot carry); throws to refuse. */
  admitted?(synthesis: SynthesisRequest): void;
  /** Where the turn's results go; a function when the framing depends on the admitted request (its rate). */
  output: TurnOutput | ((synthesis: SynthesisRequest) => TurnOutput);
  /** The turn's id on the wire (a context id); absent: its request id. */
  id?: string;
  /** How long the turn may stay open (`context_expired` after it). */
  lifetimeMs: number;
  /** How the turn runs; a function when that depends on what the opening message decoded to. */
  options?: TurnOptions | (() => TurnOptions);
  /** Called with the turn as soon as it exists, before anything of it can end (the connection's table takes it here). */
  opened?(turn: TextTurn): void;
}

/** The turn, or why there is none: `refused` to be rendered in the dialect's shape (null: nothing to answer). */
export type OpenedTurn =
  | { turn: TextTurn; refused?: undefined }
  | { turn: null; refused: ApiError; requestId: string }
  /** `empty`: the message had nothing to speak; otherwise the client left while the turn opened. */
  | { turn: null; refused: null; empty: boolean };

/** Admits a streaming-text turn with its first batch reserved, and starts it. */
export async function openTurn(connection: TurnConnection, opening: TurnOpening): Promise<OpenedTurn> {
  const session = new SynthesisSession({
    services: connection.services,
    transport: connection.transport,
    requestId: connection.newRequestId(),
    signal: connection.signal,
    connectionId: connection.connectionId,
  });
  if (typeof opening.caller !== 'function') session.useCaller(opening.caller);
  try {
    if (connection.draining()) throw new ApiError('not_ready');
    if (typeof opening.caller === 'function') await opening.caller(session);
    const input = await opening.request();
    if (input === null) {
      await session.end();
      return { turn: null, refused: null, empty: true };
    }
    const synthesis = await session.admit({ ...input, transcript: '' }, opening.endpoint, { reserveCharacters: BATCH_CHARACTERS, allowEmptyTranscript: true });
    opening.admitted?.(synthesis);
    const output = typeof opening.output === 'function' ? opening.output(synthesis) : opening.output;
    const options = typeof opening.options === 'function' ? opening.options() : opening.options;
    const turn = new TextTurn(opening.id ?? session.requestId, session, output, opening.lifetimeMs, options);
    opening.opened?.(turn);
    return { turn };
  } catch (err) {
    const error = session.fail(err);
    await session.end();
    if (connection.signal.aborted) return { turn: null, refused: null, empty: false };
    if (error.status >= 500) connection.log.error({ err, request_id: session.requestId, context_id: opening.id }, 'turn failed to open');
    return { turn: null, refused: error, requestId: session.requestId };
  }
}
