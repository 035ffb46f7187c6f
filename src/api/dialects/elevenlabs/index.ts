/**
 * @module api/elevenlabs
 * The ElevenLabs dialect, wire shape only: its REST speech routes and
 * listings in a scope with its own error shape, and its two WebSocket paths
 * on the server's router.
 */
import type { FastifyInstance } from 'fastify';
import { installErrorRenderer } from '../../../http/errors.js';
import { acceptJsonBodies } from '../../../http/json-body.js';
import { renderElevenLabsError } from './errors.js';
import type { WebSocketRoute } from '../../../http/websocket-router.js';
import type { Services } from '../../../services.js';
import { registerElevenLabsListings } from './listings.js';
import { registerElevenLabsSpeech } from './speech.js';
import { registerElevenLabsDialogue } from './dialogue.js';
import { elevenLabsWebSockets } from './websocket.js';

export function registerElevenLabs(app: FastifyInstance, services: Services): void {
  app.register(async (scope) => {
    installErrorRenderer(scope, services.config.server.bodyLimitBytes, renderElevenLabsError);
    registerElevenLabsListings(scope, services);
    await scope.register(async (speech) => {
      acceptJsonBodies(speech, services.config.server.bodyLimitBytes);
      registerElevenLabsSpeech(speech, services);
      registerElevenLabsDialogue(speech, services);
    });
  });
}

export function elevenLabsWebSocketRoutes(services: Services): WebSocketRoute[] {
  return elevenLabsWebSockets(services);
}
