/**
 * @module synthesis/diagnostics
 * The `diagnostics_channel` events of every synthesis, whatever its
 * transport: start, admission, first audio, each charge and the end. They are
 * the one source that request logs and metrics read, so no transport logs or
 * counts anything on its own. WebSocket connections report their opening and
 * closing the same way (connection counts for metrics and `/concurrency`).
 * Publishing costs nothing while no one listens.
 */
import { channel } from 'node:diagnostics_channel';
import type { Endpoint } from './gate.js';

export interface SynthesisStart {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  clientRequestId: string | null;
  transport: 'http' | 'websocket' | 'wyoming' | 'job';
  /** A WebSocket turn's connection (the id of its upgrade request, as in `voicegate:websocket:open`). */
  connectionId?: string;
}

export interface SynthesisAdmitted {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  endpoint: Endpoint;
  orgId: string | null;
  keyId: string | null;
  model: string;
  engine: string;
  characters: number;
  voice: string;
  /** Milliseconds from start to admission (auth, parsing, resolving, limits, reservation). */
  admitMs: number;
  /** Milliseconds from start to when resolving began and ended; admission (limits, reservation) runs from its end to `admitMs`. */
  resolveStartMs: number;
  resolvedMs: number;
  /** Work nobody waits on yet (a long-form job's segment): not counted against the organisation's requests. */
  background?: boolean;
}

export interface SynthesisFirstAudio {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  endpoint: Endpoint;
  model: string;
  /** Milliseconds from start to the first audio handed to the socket. */
  ttfaMs: number;
  /** How the audio cache served it: a stored entry or a synthesis in flight (`hit`), made here (`miss`); null: the cache took no part. */
  cache: 'hit' | 'miss' | null;
}

export interface SynthesisCharged {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  endpoint: Endpoint;
  orgId: string;
  model: string;
  /** Batch index: 0 for HTTP requests, 0, 1, … for a WebSocket turn. */
  index: number;
  characters: number;
  /** Milliseconds the charge took to record (0 unless someone listens to this channel). */
  ms: number;
}

export interface SynthesisChargeFailed {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  endpoint: Endpoint;
  orgId: string | null;
  index: number;
  characters: number;
  error: unknown;
  /** Milliseconds the attempt took (0 unless someone listens to this channel). */
  ms: number;
}

/**
 * One speech segment through the engine (`voicegate:synthesis:engine`), published by the pipeline
 * when it is done with it, only while someone listens (the times are not taken otherwise). Times are
 * `performance.now()` values; the pipeline knows the request, not the server, so it names the
 * request only: subscribers match it with the sessions they follow.
 */
export interface SynthesisEngineSegment {
  requestId: string;
  engine: string;
  /** The segment's index in the request's segments. */
  index: number;
  characters: number;
  startedAt: number;
  /** When the engine's first chunk arrived; null when it made none. */
  firstChunkAt: number | null;
  endedAt: number;
  /** Milliseconds spent on this thread encoding the segment's chunks (gain, resampling, encoding). */
  encodeMs: number;
  /** Seconds of audio the engine made. */
  seconds: number;
  /** Set when the segment did not end with the engine's last chunk (a failure or an abort). */
  error?: unknown;
}


export interface SynthesisEnd {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  requestId: string;
  clientRequestId: string | null;
  transport: 'http' | 'websocket' | 'wyoming' | 'job';
  /** Null when the request ended before it was resolved to an endpoint's model. */
  endpoint: Endpoint | null;
  orgId: string | null;
  model: string | null;
  engine: string | null;
  durationMs: number;
  /** Characters charged (credits ÷ the model's multiplier). */
  charactersCharged: number;
  /** Seconds of audio delivered. */
  audioSeconds: number;
  /** The registry code the request ended with, null on success. */
  errorCode: string | null;
  status: number;
  /** Set for a failure that is the server's fault (5xx), for logs. */
  error?: unknown;
  /** The client left before the request finished. */
  aborted: boolean;
}

/** A WebSocket connection was accepted (`voicegate:websocket:open`) or has closed (`:close`). */
export interface WebSocketConnection {
  /** The server (app instance) that published it: several may share a process. */
  instance: string;
  /** The id of the upgrade request, the same for both events of one connection. */
  connectionId: string;
  orgId: string | null;
}

/** `voicegate:websocket:open`: the connection, and the trace it belongs to. */
export interface WebSocketConnectionOpened extends WebSocketConnection {
  /** The upgrade request's W3C trace context headers, where it carried them. */
  traceparent?: string;
  tracestate?: string;
}

/** One attempt of a model with a fallback chain (synthesis/fallback): which model, and how it ended. */
export interface SynthesisAttempt {
  instance: string;
  requestId: string;
  model: string;
  engine: string;
  /** `served`: it made the first audio; `skipped`: it was not tried (breaker open, cannot serve the request); `failed`: it was tried and the chain moved on or ended. */
  outcome: 'served' | 'skipped' | 'failed';
  /** Why the chain moved on from it (a `voicegate_fallbacks_total` reason), or the registry code of a failure that ended the chain. */
  reason?: string;
  /** The model tried next. */
  next?: string;
}

export const diagnostics = {
  attempt: channel('voicegate:synthesis:attempt'),
  start: channel('voicegate:synthesis:start'),
  admitted: channel('voicegate:synthesis:admitted'),
  firstAudio: channel('voicegate:synthesis:first-audio'),
  charged: channel('voicegate:synthesis:charged'),
  chargeFailed: channel('voicegate:synthesis:charge-failed'),
  end: channel('voicegate:synthesis:end'),
  engine: channel('voicegate:synthesis:engine'),
  websocketOpen: channel('voicegate:websocket:open'),
  websocketClose: channel('voicegate:websocket:close'),
} as const;

export function publish<T extends object>(target: (typeof diagnostics)[keyof typeof diagnostics], message: T): void {
  if (target.hasSubscribers) target.publish(message);
}
