/**
 * @module http/connections
 * The HTTP connections of a server, and whether each has a request in flight: a leaving server
 * closes the keep-alive connections that have been idle for more than a moment at once, and
 * answers the rest with `Connection: close` (`http/server.ts`). One idle for less than that is
 * left open, since a client may be sending its next request on it at this very instant, and a
 * request reset on a connection it reused is one no client retries. Upgraded connections
 * (WebSockets) are the router's, not tracked here.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

interface Tracked {
  busy: number;
  idleSince: number;
}

export class HttpConnections {
  private readonly sockets = new Map<Socket, Tracked>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (request, response) => {
      const tracked = this.sockets.get(request.socket as Socket);
      if (!tracked) return;
      tracked.busy++;
      response.once('close', () => {
        tracked.busy--;
        tracked.idleSince = Date.now();
      });
    });
    server.on('upgrade', (request) => this.sockets.delete(request.socket as Socket));
  }

  /** Ends every connection with no request in flight for at least `idleMs`; returns how many. */
  closeIdle(idleMs: number): number {
    const now = Date.now();
    let closed = 0;
    for (const [socket, tracked] of this.sockets) {
      if (tracked.busy > 0 || now - tracked.idleSince < idleMs) continue;
      this.sockets.delete(socket);
      socket.end();
      closed++;
    }
    return closed;
  }

  /** Connections open, and those with a request in flight. */
  counts(): { open: number; busy: number } {
    let busy = 0;
    for (const tracked of this.sockets.values()) if (tracked.busy > 0) busy++;
    return { open: this.sockets.size, busy };
  }
}
