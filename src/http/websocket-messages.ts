/**
 * @module http/websocket-messages
 * What every dialect's WebSocket does alike with its frames, so a dialect
 * keeps only its own wire: a text message read as a JSON object within the
 * soft size cap, or the registry error saying why not; the refusal of a
 * binary frame; a JSON message sent, its base64 audio spliced in
 * (`audio-json.ts`); audio sent as a binary frame; and the connection as the
 * core's turns see it (`turnConnection`: its signal and id, the drain that
 * refuses new turns, its log). Each send resolves true once the socket has
 * taken the frame: awaiting it is the back-pressure, and its answer what
 * counts as delivered for billing.
 */
import { ApiError } from '../errors/api-error.js';
import type { TurnConnection } from '../synthesis/open-turn.js';
import type { SynthesisServices } from '../synthesis/services.js';
import { jsonWithAudio } from './audio-json.js';
import { newRequestId } from './request-id.js';
import type { WebSocketConnection } from './websocket-router.js';

/** A text message as a JSON object, or why it is not one (`tooLarge`: over the soft cap, not read). */
export type JsonMessage = { fields: Record<string, unknown>; error?: undefined } | { fields?: undefined; error: ApiError; tooLarge: boolean };

/** Reads a text message of `bytes` on the wire as a JSON object, within the connection's `maxMessageBytes`. */
export function readJsonMessage(connection: WebSocketConnection, text: string, bytes: number): JsonMessage {
  const limit = connection.options.maxMessageBytes;
  if (bytes > limit) return { error: new ApiError('payload_too_large', { limit }), tooLarge: true };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (err) {
    return { error: new ApiError('invalid_json', { reason: `; ${(err as Error).message}` }), tooLarge: false };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { error: new ApiError('invalid_json', { reason: '' }), tooLarge: false };
  return { fields: message as Record<string, unknown> };
}

/** Why a binary frame is refused by a dialect that takes JSON text messages only. */
export function binaryNotAccepted(): ApiError {
  return new ApiError('invalid_message', { reason: 'binary frames are not accepted; send JSON text messages' });
}

/** Sends a JSON text message; `audioField` names its base64 audio, spliced in rather than serialized. */
export function sendJson(connection: WebSocketConnection, message: Record<string, unknown>, audioField?: string): Promise<boolean> {
  return connection.send(audioField ? jsonWithAudio(message, audioField) : JSON.stringify(message));
}

/** Sends audio as one binary frame, with no header. */
export function sendBinary(connection: WebSocketConnection, bytes: Buffer): Promise<boolean> {
  if (!connection.isOpen) return Promise.resolve(false);
  return new Promise((resolve) => connection.ws.send(bytes, { binary: true }, (err) => resolve(!err)));
}

/** The connection as `openTurn` sees it: every turn of a WebSocket opens on it. */
export function turnConnection(connection: WebSocketConnection, services: SynthesisServices): TurnConnection {
  return {
    services,
    transport: 'websocket',
    signal: connection.signal,
    connectionId: connection.requestId,
    draining: () => connection.draining,
    newRequestId,
    log: connection.log,
  };
}
