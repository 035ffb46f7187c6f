/**
 * @module http/synthesis-route
 * The HTTP side of every synthesis endpoint (`/tts/bytes`, `/tts/sse`,
 * `/v1/audio/speech`): a session bound to the connection before anything is
 * awaited, then authenticate → decode (the dialect's parser) → admit → the
 * clip or the stream, and `end()` in a `finally`. An error before the first
 * audio is thrown to the scope's error handler (each dialect renders its own
 * envelope); after it, the dialect's framing reports it in-band.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TYPES } from '../audio/format.js';
import { requireScope } from '../accounts/scopes.js';
import type { WordTiming } from '../engines/engine.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import type { SynthesisServices } from '../synthesis/services.js';
import { SynthesisSession, type FrameSink, type StreamFraming } from '../synthesis/session.js';
import type { SpeechInput } from '../synthesis/speech-input.js';
import type { Endpoint } from '../synthesis/gate.js';
import { presentedKey } from './credentials.js';
import { decodeJsonObject } from './json-body.js';
import { clientRequestId } from './request-id.js';

export interface StreamAnswer {
  contentType: string;
  headers?: Record<string, string>;
  framing: StreamFraming;
}

/** What a route's decoder sees: the whole request (the body already read as a JSON object). */
export interface RouteRequest {
  body: Record<string, unknown>;
  /** The path's parameters (`/v1/text-to-speech/:voice_id`). */
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  headers: IncomingHttpHeaders;
}

/** A whole clip as a dialect answers it: the audio bytes, or a document with them (JSON with audio and alignment). */
export interface ClipAnswer {
  contentType: string;
  body: Buffer | string;
}

export interface SynthesisRoute<I extends SpeechInput> {
  /** The credential as the dialect's clients send it; absent: `Authorization: Bearer` or `X-API-Key`. */
  credential?(headers: IncomingHttpHeaders): string | null;
  decode(request: RouteRequest): I;
  endpoint(input: I): Endpoint;
  /** How a streamed answer is typed and framed. */
  stream(input: I, synthesis: SynthesisRequest): StreamAnswer;
  /** How a whole clip is answered; absent: its audio bytes. With `timings`, the clip comes with its word timings. */
  clip?: { timings: boolean; answer(input: I, synthesis: SynthesisRequest, clip: { audio: Buffer; words: WordTiming[]; seconds: number }): ClipAnswer };
  /** Headers of the dialect's own on every answer (set once the request is admitted). */
  headers?(input: I, synthesis: SynthesisRequest): Record<string, string>;
}

/** The statuses a synthesis request can be refused with (each route's error responses). */
export const TTS_ERROR_STATUSES: readonly number[] = [400, 401, 402, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504];

/** Audio bytes as they are made; a failure after the first byte can only cut the connection. */
export function audioStream(synthesis: SynthesisRequest): StreamAnswer {
  return {
    contentType: CONTENT_TYPES[synthesis.format.container],
    framing: {
      piece: (piece) => (piece.audio.length > 0 ? [piece.audio] : []),
      done: () => [],
      error: () => null,
    },
  };
}

export async function serveSynthesis<I extends SpeechInput>(
  services: SynthesisServices,
  request: FastifyRequest,
  reply: FastifyReply,
  route: SynthesisRoute<I>,
): Promise<FastifyReply> {
  const session = new SynthesisSession({ services, transport: 'http', requestId: String(request.id), clientRequestId: clientRequestId(request.headers) });
  // Bound before anything is awaited: a client that leaves at any step is seen at that step.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) session.leave();
  });
  try {
    requireScope(await session.authenticate(route.credential ? route.credential(request.headers) : presentedKey(request.headers, request.url, false), request.ip), 'tts');
    const body = decodeJsonObject(request.body);
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    const input = route.decode({
      body,
      params: (request.params ?? {}) as Record<string, string>,
      query: (request.query ?? {}) as Record<string, string | string[] | undefined>,
      headers: request.headers,
    });
    // `Cache-Control: no-store`: neither served from the audio cache nor kept in it.
    if (noStore(request.headers['cache-control'])) input.cache = false;
    const synthesis = await session.admit(input, route.endpoint(input));
    if (route.headers) reply.headers(route.headers(input, synthesis));
    if (!synthesis.streaming) {
      const clip = await session.clip({ timings: route.clip?.timings });
      const answer = route.clip ? route.clip.answer(input, synthesis, clip) : { contentType: CONTENT_TYPES[synthesis.format.container], body: clip.audio };
      return reply.headers(clip.headers).type(answer.contentType).header('content-length', Buffer.byteLength(answer.body)).send(answer.body);
    }
    const answer = route.stream(input, synthesis);
    await session.stream(answer.framing, rawSink(reply, answer));
    return reply;
  } catch (err) {
    session.fail(err);
    throw err;
  } finally {
    await session.end();
  }
}

function noStore(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : header;
  return value !== undefined && value.split(',').some((directive) => directive.trim().toLowerCase() === 'no-store');
}

/**
 * Writes a stream straight to the socket (Fastify steps aside once it opens), so that "handed to
 * the socket" is what each write's callback says, not what a buffering stream adapter has taken.
 */
/**
 * Frames joined where that costs no copy: neighbouring texts into one string (a string is copied
 * into the socket's buffer whole, joined or not), neighbouring views of one buffer, end to end, into
 * one view (a stored entry's pieces are such views). A stream's frames then go out as one chunk.
 */
export function coalesce(frames: readonly (string | Buffer)[]): (string | Buffer)[] {
  const out: (string | Buffer)[] = [];
  for (const frame of frames) {
    if (frame.length === 0) continue;
    const last = out.length > 0 ? out[out.length - 1] : undefined;
    if (typeof frame === 'string' && typeof last === 'string') out[out.length - 1] = last + frame;
    else if (typeof frame !== 'string' && typeof last === 'object' && last.buffer === frame.buffer && last.byteOffset + last.length === frame.byteOffset) {
      out[out.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + frame.length);
    } else out.push(frame);
  }
  return out;
}

function rawSink(reply: FastifyReply, answer: StreamAnswer): FrameSink {
  const res = reply.raw;
  return {
    open(costHeaders) {
      reply.hijack();
      res.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...costHeaders, ...answer.headers, 'content-type': answer.contentType });
    },
    write(frames) {
      return new Promise((resolve, reject) => {
        if (res.destroyed || res.writableEnded) return reject(new Error('client disconnected'));
        const chunks = coalesce(frames);
        if (chunks.length === 0) return resolve();
        const gone = () => reject(new Error('client disconnected'));
        res.once('close', gone);
        const last = chunks.length - 1;
        // Several chunks (rare: text and audio mixed) leave in one writev.
        if (last > 0) res.cork();
        for (let i = 0; i < last; i++) res.write(chunks[i]);
        res.write(chunks[last], (err) => {
          res.off('close', gone);
          if (err) reject(err);
          else resolve();
        });
        if (last > 0) res.uncork();
      });
    },
    end() {
      res.end();
    },
    destroy() {
      res.destroy();
    },
  };
}
