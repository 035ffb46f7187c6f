/**
 * @module api/cartesia/websocket
 * `GET /tts/websocket`, on the server's one WebSocket router (`http/websocket-router`):
 * the same server, port and TLS as the REST API — the Cartesia SDK dials
 * exactly there. The key comes from a header or the `api_key` /
 * `access_token` query parameter (browsers and the SDK's ESM build cannot set
 * headers), and the `Cartesia-Version` (`cartesia_version` in the query wins)
 * is checked before the upgrade; a refused upgrade gets a plain HTTP error
 * with the documented JSON body (or the plain text of a version before
 * 2026-03-01).
 */
import { errorShapeFor, requestedVersion, versionProblem } from '../../../http/api-version.js';
import { presentedKey } from '../../../http/credentials.js';
import { rawErrorResponse } from '../../../http/errors.js';
import type { WebSocketRoute } from '../../../http/websocket-router.js';
import type { Services } from '../../../services.js';
import { WebSocketSession } from './ws-session.js';

export const WEBSOCKET_PATH = '/tts/websocket';

export function cartesiaWebSocket(services: Services): WebSocketRoute {
  return {
    path: WEBSOCKET_PATH,
    credential: (request) => presentedKey(request.headers, request.url, true),
    // The query's cartesia_version wins over the header.
    check: (request) => versionProblem(requestedVersion(request.headers, request.url)),
    refusal: (error, requestId, request) => rawErrorResponse(error, requestId, errorShapeFor(request.headers, request.url)),
    open: (connection) => new WebSocketSession(connection, services),
  };
}
