/**
 * @module http/websocket-router
 * The one `upgrade` listener of the server: path → the dialect's WebSocket
 * route, each registered in one line. What every dialect's socket shares is
 * here: a path that no route owns is 404, a server shutting down is
 * `not_ready`, the credential is checked before the upgrade (or, where the
 * dialect allows it, from the first message, as ElevenLabs' clients send
 * it), one message at a time in arrival order, the hard size cap (`ws`
 * closes with 1009 above it), ping/pong, the idle timeout, the open and
 * close events, and the drain on shutdown. A refused upgrade is a plain
 * HTTP response in the route's own error shape. A route only decodes its
 * messages and frames what it sends.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Config } from '../config/schema.js';
import { requireScope } from '../accounts/scopes.js';
import type { TrustProxy } from '../config/sections/server.js';
import { ApiError, toApiError } from '../errors/api-error.js';
import type { Logger } from '../log/logger.js';
import { diagnostics, publish, type WebSocketConnectionOpened } from '../synthesis/diagnostics.js';
import type { Caller, RequestGate } from '../synthesis/gate.js';
import { clientAddress } from './client-address.js';
import { newRequestId } from './request-id.js';

const PING_INTERVAL_MS = 30_000;

type WebSocketOptions = Config['server']['websocket'];

/** What a route sees of the upgrade request. */
export interface UpgradeRequest {
  headers: IncomingHttpHeaders;
  url: string;
  /** The path's `:name` segments, decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The client's address: the socket's, or from `X-Forwarded-For` behind trusted proxies (`server.trustProxy`). */
  address: string | null;
}

export interface WebSocketRoute {
  /** `/tts/websocket`, or with `:name` segments: `/v1/text-to-speech/:voice_id/stream-input`. */
  path: string;
  /** The credential the upgrade carries (header or query), or null. */
  credential(request: UpgradeRequest): string | null;
  /** The credential may come in the first message instead: an upgrade without one is let through, unauthenticated. */
  credentialInMessage?: boolean;
  /** A problem with the upgrade request beyond its credential (a version header), or null. */
  check?(request: UpgradeRequest): ApiError | null;
  /** A refused upgrade's whole HTTP response, in the dialect's error shape. */
  refusal(error: ApiError, requestId: string, request: UpgradeRequest): string;
  /** The connection's handler, once upgraded. */
  open(connection: WebSocketConnection): WebSocketHandler;
}

export interface WebSocketHandler {
  /** One text message: given one at a time, in arrival order; `bytes` is its size on the wire. */
  message(text: string, bytes: number): Promise<void>;
  /** A binary frame (the routes here take only text). */
  binary(): Promise<void>;
  /** Whether work is under way (a turn open, audio being made): the idle timeout waits while it is. */
  busy(): boolean;
  /**
   * Whether a turn is open (begun and not ended), even one waiting for the client's next text:
   * a leaving server closes the socket only after it, so no turn is cut. Meanwhile no new turn
   * opens: `connection.draining`, which `openTurn` reads, refuses it.
   */
  inTurn(): boolean;
  /** The socket has closed. */
  closed(): void;
}

/** One upgraded connection, as a route's handler uses it. */
export class WebSocketConnection {
  /** Aborts when the socket closes. */
  readonly signal: AbortSignal;
  private readonly closedController = new AbortController();
  private caller: Caller | null;
  private opened = false;
  private leaving = false;
  /** When the connection last did something, on the monotonic clock (`touch`). */
  lastActivity = performance.now();
  /** The idle timeout in force (a route may set its own, e.g. from the query). */
  idleTimeoutMs: number;
  idleClose: { code: number; reason: string } = { code: 4000, reason: '' };

  /** The connection did something (a message, a turn's end): its idle and quiet times start again. */
  touch(): void {
    this.lastActivity = performance.now();
  }

  constructor(
    /** The connection's id: its log lines' and its open and close events'. */
    readonly requestId: string,
    readonly ws: WebSocket,
    readonly request: UpgradeRequest,
    caller: Caller | null,
    readonly options: WebSocketOptions,
    private readonly gate: RequestGate,
    private readonly instance: string,
    readonly log: Logger,
  ) {
    this.caller = caller;
    this.signal = this.closedController.signal;
    this.idleTimeoutMs = options.idleTimeoutMs;
    if (caller) this.announce(caller);
  }

  /** The server is leaving: no new turn starts on this connection (the open ones finish). */
  get draining(): boolean {
    return this.leaving;
  }

  /** @internal the router's: the drain has begun. */
  drain(): void {
    this.leaving = true;
  }

  /** The authenticated caller; null until a route that takes the credential from a message has done so. */
  get authenticated(): Caller | null {
    return this.caller;
  }

  /** Authenticates from a message's credential (null: none given); the gate's refusal is thrown. */
  async authenticate(credential: string | null): Promise<Caller> {
    if (this.caller) return this.caller;
    const caller = await this.gate.authenticate(credential, { token: 'tts', address: this.request.address });
    requireScope(caller, 'tts');
    this.caller = caller;
    this.announce(caller);
    return caller;
  }

  private announce(caller: Caller): void {
    this.opened = true;
    const { traceparent, tracestate } = this.request.headers;
    publish(diagnostics.websocketOpen, {
      instance: this.instance,
      connectionId: this.requestId,
      orgId: caller.orgId,
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
      ...(typeof tracestate === 'string' ? { tracestate } : {}),
    } satisfies WebSocketConnectionOpened);
  }

  /**
   * Sends a text frame; resolves true once it has been written to the socket, false when the socket
   * is not open or failed: awaiting it is the back-pressure, and its answer is what counts as delivered.
   */
  send(text: string): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    return new Promise((resolve) => this.ws.send(text, (err) => resolve(!err)));
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** @internal the router's: the socket closed. */
  ended(): void {
    this.closedController.abort(new Error('websocket closed'));
    if (this.opened && this.caller) publish(diagnostics.websocketClose, { instance: this.instance, connectionId: this.requestId, orgId: this.caller.orgId });
  }
}

interface CompiledRoute {
  route: WebSocketRoute;
  match(path: string): Record<string, string> | null;
}

function compile(route: WebSocketRoute): CompiledRoute {
  const parts = route.path.split('/');
  return {
    route,
    match(path) {
      const given = path.split('/');
      if (given.length !== parts.length) return null;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        if (parts[i].startsWith(':')) {
          if (given[i] === '') return null;
          try {
            params[parts[i].slice(1)] = decodeURIComponent(given[i]);
          } catch {
            return null;
          }
        } else if (parts[i] !== given[i]) return null;
      }
      return params;
    },
  };
}

export interface WebSocketRouterOptions {
  options: WebSocketOptions;
  gate: RequestGate;
  instance: string;
  logger: Logger;
  shutdownGraceMs: number;
  /** `server.trustProxy`: whether an upgrade's address comes from `X-Forwarded-For`. */
  trustProxy: TrustProxy;
  /** A refusal for a path no route owns, in the server's default error shape. */
  notFound(error: ApiError, requestId: string, request: UpgradeRequest): string;
}

/** An open socket, and its drain once the server is leaving. */
interface Entry {
  connection: WebSocketConnection;
  handler: WebSocketHandler;
  /** How long the socket must have been quiet (no turn, no message) before it closes. */
  quietMs?: number;
  drained?: Promise<void>;
}

export class WebSocketRouter {
  private readonly routes: CompiledRoute[] = [];
  private readonly connections = new Set<Entry>();
  private readonly wss: WebSocketServer;

  constructor(
    app: FastifyInstance,
    private readonly config: WebSocketRouterOptions,
    isClosing: () => boolean,
  ) {
    // The hard cap (16 × the soft per-message cap, at least 1 MiB) is well above the soft one, so an
    // oversized message is answered in-band and the socket stays open; one over the hard cap is never
    // buffered: ws closes the socket with 1009 (docs/errors.md, docs/api.md).
    this.wss = new WebSocketServer({ noServer: true, maxPayload: Math.max(config.options.maxMessageBytes * 16, 1 << 20) });
    app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const requestId = newRequestId();
      const url = request.url ?? '';
      const query = url.indexOf('?');
      const path = query >= 0 ? url.slice(0, query) : url;
      const upgrade: UpgradeRequest = {
        headers: request.headers,
        url,
        params: {},
        query: new URLSearchParams(query >= 0 ? url.slice(query + 1) : ''),
        address: clientAddress(request.socket.remoteAddress, request.headers, config.trustProxy),
      };
      socket.on('error', () => socket.destroy());
      let found: CompiledRoute | undefined;
      for (const route of this.routes) {
        const params = route.match(path);
        if (params) {
          upgrade.params = params;
          found = route;
          break;
        }
      }
      if (!found) return void socket.end(config.notFound(new ApiError('not_found', { method: 'GET', path }), requestId, upgrade));
      const { route } = found;
      const refuse = (error: ApiError) => void socket.end(route.refusal(error, requestId, upgrade));
      if (isClosing()) return refuse(new ApiError('not_ready', {}, { 'retry-after': '1' }));
      const problem = route.check?.(upgrade);
      if (problem) return refuse(problem);
      const credential = route.credential(upgrade);
      const authenticated =
        credential === null && route.credentialInMessage
          ? Promise.resolve(null)
          : config.gate.authenticate(credential, { token: 'tts', address: upgrade.address }).then((caller) => {
              requireScope(caller, 'tts');
              return caller;
            });
      authenticated.then(
        (caller) => this.wss.handleUpgrade(request, socket, head, (ws) => this.opened(ws, route, upgrade, caller)),
        (err) => refuse(toApiError(err)),
      );
    });
    // The listener is closing: every socket closes at the end of its turn, quiet or not.
    app.addHook('preClose', async () => {
      await this.drain(0);
    });
  }

  /**
   * The server is leaving: each open socket closes with 1001 (going away) once its turn has ended
   * and it has been quiet for `quietMs` (a client may be sending its next message on one quiet for
   * less), and no new turn starts on it after that. Resolves when every one has closed, bounded by
   * the grace period. Sockets opened after this call are drained by the next one (the listener's close).
   */
  drain(quietMs: number): Promise<void> {
    return Promise.all([...this.connections].map((entry) => this.drainOne(entry, quietMs))).then(() => {});
  }

  /** Open sockets. */
  get open(): number {
    return this.connections.size;
  }

  /** Registers a route's path; the first route whose path matches takes the upgrade. */
  route(route: WebSocketRoute): void {
    this.routes.push(compile(route));
  }

  private opened(ws: WebSocket, route: WebSocketRoute, request: UpgradeRequest, caller: Caller | null): void {
    const requestId = newRequestId();
    const logger = this.config.logger.child(caller ? { request_id: requestId, org_id: caller.orgId } : { request_id: requestId });
    const connection = new WebSocketConnection(requestId, ws, request, caller, this.config.options, this.config.gate, this.config.instance, logger);
    const handler = route.open(connection);
    const entry = { connection, handler };
    this.connections.add(entry);
    let queue: Promise<void> = Promise.resolve();
    let alive = true;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      connection.touch();
      queue = queue
        .then(() => {
          if (isBinary) return handler.binary();
          const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
          const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
          return handler.message(text, bytes);
        })
        .catch((err) => logger.error({ err }, 'websocket message failed'));
    });
    ws.on('pong', () => (alive = true));
    ws.on('error', (err) => logger.warn({ err }, 'websocket error'));
    const idleCheck = setInterval(() => {
      if (handler.busy() || ws.readyState !== WebSocket.OPEN) return;
      if (performance.now() - connection.lastActivity >= connection.idleTimeoutMs) {
        const { code, reason } = connection.idleClose;
        ws.close(code, reason || `idle timeout: no message for ${Math.round(connection.idleTimeoutMs / 1000)} s`);
      }
    }, Math.min(5000, Math.max(250, Math.min(this.config.options.idleTimeoutMs, connection.idleTimeoutMs) / 4)));
    const ping = setInterval(() => {
      if (!alive) return void ws.terminate();
      alive = false;
      ws.ping();
    }, PING_INTERVAL_MS);
    idleCheck.unref();
    ping.unref();
    ws.once('close', () => {
      clearInterval(idleCheck);
      clearInterval(ping);
      this.connections.delete(entry);
      connection.ended();
      handler.closed();
    });
    logger.info('websocket opened');
  }

  private drainOne(entry: Entry, quietMs: number): Promise<void> {
    entry.quietMs = Math.min(entry.quietMs ?? quietMs, quietMs);
    entry.drained ??= (async () => {
      const { connection, handler } = entry;
      const deadline = performance.now() + this.config.shutdownGraceMs;
      while (connection.isOpen && performance.now() < deadline) {
        // Once the listener closes, no new turn starts: the open ones finish within the grace.
        if (entry.quietMs === 0) connection.drain();
        if (!handler.inTurn() && performance.now() - connection.lastActivity >= entry.quietMs!) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // No await between the check and the close: no turn can begin in between.
      connection.drain();
      connection.close(1001, 'server shutting down');
      // The client answers the close frame once it has read every frame before it.
      if (!connection.signal.aborted) {
        const left = Math.max(0, deadline - performance.now());
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          connection.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
      if (!connection.signal.aborted) connection.ws.terminate();
    })();
    return entry.drained;
  }
}
