/**
 * @module api/wyoming/listener
 * The Wyoming TCP listener (off unless `wyoming.port` is set): one
 * `WyomingConnection` per socket, at most `wyoming.maxConnections` at once
 * (one more gets a `too_many_connections` error and is closed), idle ones
 * closed after `wyoming.idleTimeoutMs`. Each connection speaks as the key
 * `wyoming.apiKey` names when it opens. On shutdown it stops accepting, lets
 * each connection finish the synthesis under way and closes it, and after
 * the grace period destroys what is left.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../../errors/api-error.js';
import type { Logger } from '../../../log/logger.js';
import type { Services } from '../../../services.js';
import { WyomingConnection } from './connection.js';
import { errorEvent } from './events.js';

export interface WyomingListenerOptions {
  host: string;
  port: number;
  maxConnections: number;
  idleTimeoutMs: number;
  shutdownGraceMs: number;
}

export interface WyomingStatus {
  listening: boolean;
  /** The bound port (null before listening). */
  port: number | null;
  connections: number;
}

export class WyomingListener {
  private readonly server: Server;
  private readonly connections = new Map<Socket, WyomingConnection>();
  private listening = false;
  private port: number | null = null;
  private closing: Promise<void> | null = null;
  private readonly idleCheck: NodeJS.Timeout;

  constructor(
    private readonly services: Services,
    private readonly options: WyomingListenerOptions,
    private readonly logger: Logger,
  ) {
    this.server = createServer((socket) => this.accept(socket));
    this.server.on('error', (err) => logger.error({ err }, 'wyoming listener error'));
    const every = Math.min(5000, Math.max(250, options.idleTimeoutMs / 4));
    this.idleCheck = setInterval(() => this.closeIdle(), every);
    this.idleCheck.unref();
  }

  /** Resolves with the bound address once listening. */
  listen(): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : this.options.port;
        this.listening = true;
        resolve({ host: this.options.host, port: this.port });
      });
    });
  }

  status(): WyomingStatus {
    return { listening: this.listening, port: this.port, connections: this.connections.size };
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    if (this.closing) return void socket.destroy();
    if (this.connections.size >= this.options.maxConnections) {
      socket.end(Buffer.concat(errorEvent(new ApiError('too_many_connections', { max: this.options.maxConnections }))));
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    const id = randomUUID();
    const log = this.logger.child({ wyoming_connection: id });
    const connection = new WyomingConnection({ services: this.services, socket, address: socket.remoteAddress ?? null, apiKey: this.services.config.wyoming.apiKey, log, id });
    this.connections.set(socket, connection);
    socket.once('close', () => {
      this.connections.delete(socket);
      connection.closedNow();
    });
  }

  private closeIdle(): void {
    const now = performance.now();
    for (const connection of this.connections.values()) {
      if (!connection.busy && now - connection.lastActivity >= this.options.idleTimeoutMs) connection.end();
    }
  }

  /** Stops accepting; each connection closes once its synthesis under way has ended. */
  drain(): void {
    if (this.listening) {
      this.listening = false;
      this.server.close();
    }
    for (const connection of this.connections.values()) connection.drain();
  }

  /** Drains, then waits for every connection to close, up to the grace period, and destroys what is left. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.drain();
      const deadline = performance.now() + this.options.shutdownGraceMs;
      while (this.connections.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const socket of this.connections.keys()) socket.destroy();
      clearInterval(this.idleCheck);
    })();
    return this.closing;
  }
}
