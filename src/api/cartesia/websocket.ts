/**
 * @module api/cartesia/websocket
 * `GET /tts/websocket` upgrades on the same server (and port, and TLS) as
 * the REST API — the Cartesia SDK dials exactly there. The key is checked
 * before the upgrade, from a header or the `api_key` / `access_token` query
 * parameter (browsers and the SDK's ESM build cannot set headers), and the
 * `Cartesia-Version` (`cartesia_version` in the query wins); a refused
 * upgrade gets a plain HTTP error with the documented JSON body (or the
 * plain text of a version before 2026-03-01).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import { ApiError, toApiError } from '../../errors/api-error.js';
import { errorShapeFor, requestedVersion, versionProblem } from '../../http/api-version.js';
import { rawErrorResponse } from '../../http/errors.js';
import { newRequestId } from '../../http/request-id.js';
import type { Services } from '../../services.js';
import { diagnostics, publish } from '../../synthesis/diagnostics.js';
import { WebSocketSession } from './ws-session.js';
import { authenticateRequest } from '../../http/credentials.js';

export const WEBSOCKET_PATH = '/tts/websocket';

function refuse(socket: Duplex, request: IncomingMessage, error: ApiError, requestId: string): void {
  socket.end(rawErrorResponse(error, requestId, errorShapeFor(request.headers, request.url ?? '')));
}

export function registerWebSocket(app: FastifyInstance, services: Services, isClosing: () => boolean): void {
  const options = services.config.server.websocket;
  // The hard cap (16 × the soft per-message cap, at least 1 MiB) is well above
  // the soft one, so an oversized message is answered with an error event and
  // the socket stays open; one over the hard cap is never buffered: ws closes
  // the socket with 1009 (docs/errors.md, docs/api.md).
  const wss = new WebSocketServer({ noServer: true, maxPayload: Math.max(options.maxMessageBytes * 16, 1 << 20) });
  const sessions = new Set<WebSocketSession>();

  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const requestId = newRequestId();
    const path = (request.url ?? '').split('?')[0];
    socket.on('error', () => socket.destroy());
    if (path !== WEBSOCKET_PATH) return refuse(socket, request, new ApiError('not_found', { method: 'GET', path }), requestId);
    if (isClosing()) return refuse(socket, request, new ApiError('not_ready', {}, { 'retry-after': '1' }), requestId);
    // The query's cartesia_version wins over the header.
    const version = versionProblem(requestedVersion(request.headers, request.url ?? ''));
    if (version) return refuse(socket, request, version, requestId);
    authenticateRequest(services.gate, { headers: request.headers, url: request.url ?? '' }, { allowQuery: true, token: 'tts' }).then(
      (caller) => {
        wss.handleUpgrade(request, socket, head, (ws) => {
          const log = services.logger.child({ request_id: requestId, org_id: caller.orgId });
          const session = new WebSocketSession(ws, caller, services, options, log);
          sessions.add(session);
          const connection = { instance: services.instanceId, connectionId: requestId, orgId: caller.orgId };
          publish(diagnostics.websocketOpen, connection);
          ws.once('close', () => {
            sessions.delete(session);
            publish(diagnostics.websocketClose, connection);
          });
          log.info('websocket opened');
        });
      },
      (err) => refuse(socket, request, toApiError(err), requestId),
    );
  });

  app.addHook('preClose', async () => {
    await Promise.all([...sessions].map((session) => session.drain(services.config.server.shutdownGraceMs)));
  });
}
