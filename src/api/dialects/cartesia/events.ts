/**
 * @module api/cartesia/events
 * The Cartesia stream event shapes, shared by SSE and the WebSocket. Every
 * event carries `context_id`; a chunk always carries `data` and a numeric
 * `step_time`, and `done: true` is only ever on `done` and `error`; an
 * error event has the registry's code, status and title and the message
 * twice, as `message` and as `error`.
 */
import type { ApiError } from '../../../errors/api-error.js';
import type { WordTiming } from '../../../engines/engine.js';

export type StreamEvent = Record<string, unknown> & { type: string; context_id: string | null };

export function chunkEvent(contextId: string | null, audio: Buffer, stepTime: number): StreamEvent {
  return { type: 'chunk', data: audio.toString('base64'), done: false, status_code: 206, step_time: Math.round(stepTime * 100) / 100, context_id: contextId };
}

/**
 * Word timestamps, already on the request's or turn's clock (`synthesis/word-align`), in
 * milliseconds' precision; a dialogue's carry `voices` beside `words`, each word's voice id.
 */
export function timestampsEvent(contextId: string | null, words: WordTiming[]): StreamEvent {
  const round = (t: number) => Math.round(t * 1000) / 1000;
  const timestamps: Record<string, unknown[]> = { words: words.map((w) => w.word) };
  if (words.length > 0 && words[0].voice !== undefined) timestamps.voices = words.map((w) => w.voice ?? null);
  timestamps.start = words.map((w) => round(w.start));
  timestamps.end = words.map((w) => round(w.end));
  return { type: 'timestamps', done: false, status_code: 206, context_id: contextId, word_timestamps: timestamps };
}

/** SSML marks, each at its time on the request's or turn's clock, in milliseconds' precision. */
export function markTimestampsEvent(contextId: string | null, marks: readonly { name: string; time: number }[]): StreamEvent {
  return {
    type: 'mark_timestamps',
    done: false,
    status_code: 206,
    context_id: contextId,
    mark_timestamps: { marks: marks.map((m) => m.name), time: marks.map((m) => Math.round(m.time * 1000) / 1000) },
  };
}

export function doneEvent(contextId: string | null, model?: string): StreamEvent {
  // `model`: the model that served (after a fall-over, a fallback of the one asked for).
  return model ? { type: 'done', done: true, status_code: 200, context_id: contextId, model } : { type: 'done', done: true, status_code: 200, context_id: contextId };
}

export function flushDoneEvent(contextId: string, flushId: number | string): StreamEvent {
  return { type: 'flush_done', done: false, flush_done: true, flush_id: flushId, status_code: 206, context_id: contextId };
}

/**
 * The error event, the same for every `Cartesia-Version`: the structured fields of 2026-03-01 on
 * (`error_code`, `title`, `message`) and the `error` string (the message) of the versions before
 * it, which clients pinned to those dates (LiveKit's plugins) require.
 */
export function errorEvent(contextId: string | null, error: ApiError, requestId: string): StreamEvent {
  return {
    type: 'error',
    context_id: contextId,
    done: true,
    error: error.message,
    error_code: error.code,
    status_code: error.status,
    title: error.title,
    message: error.message,
    doc_url: '',
    request_id: requestId,
  };
}
