/**
 * @module api/deepgram
 * The Deepgram dialect (Aura), wire shape only: `POST /v1/speak` in a scope
 * with Deepgram's error shape and body types, its model listing, and the
 * `/v1/speak` WebSocket path on the server's router.
 */
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { installErrorRenderer, unsupportedMediaType } from '../../../http/errors.js';
import { decodeJsonObject } from '../../../http/json-body.js';
import type { Services } from '../../../services.js';
import { deepgramError, textTooLong } from './errors.js';
import { PAYLOAD_ERROR, type DeepgramContext } from './parse.js';
import { deepgramRequestId, registerDeepgramSpeech } from './speech.js';
import { deepgramWebSocket } from './websocket.js';
import { registerDeepgramModels } from './models.js';
import type { WebSocketRoute } from '../../../http/websocket-router.js';

export function deepgramContext(services: Services): DeepgramContext {
  return {
    config: services.config.deepgram,
    builtinLanguage: (id) => services.voices.builtinVoice(id)?.language,
  };
}

/**
 * `deepgramOnly`: the route options that keep a path another dialect also answers (`GET /v1/models`)
 * for Deepgram's callers (`Authorization: Token …`); the assembly decides how.
 */
export function registerDeepgram(app: FastifyInstance, services: Services, deepgramOnly: RouteShorthandOptions): void {
  const context = deepgramContext(services);
  app.register(async (scope) => {
    const limit = services.config.server.bodyLimitBytes;
    installErrorRenderer(scope, limit, (error, request, thrown) => {
      const over = error.code === 'input_too_long' ? /maximum is (\d+)/.exec(error.message) : null;
      // The body's schema refused `text` (absent, not a string): Deepgram's payload error.
      const payload = error.code === 'invalid_request' && (error as { loc?: unknown[] }).loc?.[0] === 'body' ? { deepgram: PAYLOAD_ERROR } : null;
      const { status, body } = deepgramError(error, deepgramRequestId(request.raw), over ? { deepgram: textTooLong(Number(over[1])) } : (payload ?? thrown));
      return { status, body };
    });
    scope.addHook('onRequest', async (request, reply) => {
      reply.header('dg-request-id', deepgramRequestId(request.raw));
    });
    // JSON, or the text itself as `text/plain`; any other type is Deepgram's 415.
    scope.removeAllContentTypeParsers();
    // A body that is not a JSON object stays bytes: the route's schema refuses it, and it is answered
    // (`invalid_json`, as `decodeJsonObject` words it) once the caller is authenticated.
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) => {
      try {
        done(null, decodeJsonObject(body));
      } catch {
        done(null, body);
      }
    });
    scope.addContentTypeParser('text/plain', { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) => done(null, { text: (body as Buffer).toString('utf8') }));
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (request, _body, done) => done(unsupportedMediaType(request.headers['content-type'], 'application/json'), undefined));
    registerDeepgramSpeech(scope, services, context);
    registerDeepgramModels(scope, services, deepgramOnly);
  });
}

/** `wss://…/v1/speak`, for the server's router. */
export function deepgramWebSocketRoute(services: Services): WebSocketRoute {
  return deepgramWebSocket(services, deepgramContext(services));
}
