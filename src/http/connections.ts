/**
 * @module http/connections
 * The HTTP connections of a server, whether each has a request in flight, and how a leaving
 * server closes them so that no client loses the end of an answer.
 *
 * - **Lingering close.** A connection the server closes is ended (FIN after the last byte) and
 *   stays open until the client closes its side, which it does once it has read the whole
 *   answer. Node's own close paths (`Connection: close` answers, `closeIdleConnections` on
 *   `server.close`) destroy the socket as soon as its last write is handed to the kernel: a
 *   process that then exits takes the kernel's unsent buffers with it when it runs in a
 *   container (the network namespace goes), so a slow reader lost most of a long stream.
 *   Both paths are routed here, per socket and per server, bounded by the caller's deadline.
 * - **Drain.** From `drain()` on, every answer says `Connection: close` (`http/server.ts`) and
 *   its connection closes when it has been sent. A connection idle for more than a moment is
 *   closed at once; one idle for less, or whose answer began before the drain (and so said
 *   keep-alive), is closed once it has been idle for that moment, or after its next answer if
 *   one comes first. Closing it sooner could meet the client's next request on the wire, and a
 *   request reset on a connection the client reused is one no client retries. The listener's
 *   close closes whatever is left.
 *
 * Upgraded connections (WebSockets) are the router's, not tracked here.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

interface Tracked {
  busy: number;
  idleSince: number;
  /** Ended by the server, waiting for the client to close its side. */
  closing: boolean;
}

export class HttpConnections {
  private readonly sockets = new Map<Socket, Tracked>();
  private draining = false;
  /** How long a draining connection may stay idle before it is closed. */
  private idleMs = Infinity;

  /** `lingerMs`: how long a closed connection may wait for its client before it is destroyed. */
  constructor(
    server: Server,
    private readonly lingerMs: number,
  ) {
    // Over TLS the HTTP layer's socket is the TLS one: `connection` brings the raw TCP socket.
    server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
      const tracked: Tracked = { busy: 0, idleSince: performance.now(), closing: false };
      this.sockets.set(socket, tracked);
      // Node calls this when an answer that said `Connection: close` has been written.
      socket.destroySoon = () => this.linger(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (request, response) => {
      const tracked = this.sockets.get(request.socket as Socket);
      if (!tracked) return;
      tracked.busy++;
      response.once('close', () => {
        tracked.busy--;
        tracked.idleSince = performance.now();
        // An answer that began before the drain said keep-alive, and its client may be sending the
        // next request already: that one is answered with `close`; a connection left idle for the
        // moment is closed then.
        if (this.draining && tracked.busy === 0) this.closeWhenIdle(request.socket as Socket, tracked);
      });
    });
    server.on('upgrade', (request) => this.sockets.delete(request.socket as Socket));
    // `server.close()` calls this (Node ≥ 19), as Fastify's close does: a closing server drains,
    // and its idle connections linger too.
    server.closeIdleConnections = () => void this.drain(0);
  }

  /**
   * From now on a connection closes after its next answer, or once it has been idle for `idleMs`;
   * those idle for that long already close now. Returns how many.
   */
  drain(idleMs: number): number {
    this.draining = true;
    this.idleMs = Math.min(this.idleMs, idleMs);
    let closed = 0;
    for (const [socket, tracked] of this.sockets) {
      if (tracked.busy > 0 || tracked.closing) continue;
      if (this.closeWhenIdle(socket, tracked)) closed++;
    }
    return closed;
  }

  /** Closes the connection if it has been idle for the moment, or checks again when it will have been; true if closed now. */
  private closeWhenIdle(socket: Socket, tracked: Tracked): boolean {
    const left = tracked.idleSince + this.idleMs - performance.now();
    if (left <= 0) {
      this.linger(socket);
      return true;
    }
    const timer = setTimeout(() => {
      if (tracked.busy === 0 && !tracked.closing) this.closeWhenIdle(socket, tracked);
    }, left);
    timer.unref();
    return false;
  }

  /** Connections open, those with a request in flight, and those closed by the server whose client has not closed yet. */
  counts(): { open: number; busy: number; closing: number } {
    let busy = 0;
    let closing = 0;
    for (const tracked of this.sockets.values()) {
      if (tracked.busy > 0) busy++;
      else if (tracked.closing) closing++;
    }
    return { open: this.sockets.size, busy, closing };
  }

  /**
   * Ends the socket after what is queued on it, and keeps it until the client closes its side
   * (it has then read everything before the FIN), or `lingerMs` has passed.
   */
  private linger(socket: Socket): void {
    const tracked = this.sockets.get(socket);
    if (tracked) {
      if (tracked.closing) return;
      tracked.closing = true;
    }
    if (socket.destroyed) return;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), this.lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }
}
