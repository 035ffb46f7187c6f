/**
 * @module test/helpers/l4-balancer
 * A layer-4 balancer that behaves as a Kubernetes Service does (kube-proxy):
 * it balances TCP connections, not requests, so a keep-alive connection
 * stays pinned to one backend for its whole life; a new connection goes to
 * the next backend whose readiness probe (`GET /readyz`, every `periodMs`)
 * passed, as an endpoint that is not ready leaves the Service's endpoints.
 * Each direction's FIN is passed on as it comes (half-close), so a server's
 * lingering close reaches the client as it would without the balancer.
 */
import net, { type Socket } from 'node:net';

interface Backend {
  url: string;
  host: string;
  port: number;
  ready: boolean;
}

export class L4Balancer {
  private readonly server: net.Server;
  private readonly backends: Backend[] = [];
  private readonly sockets = new Set<Socket>();
  private next = 0;
  private probing: NodeJS.Timeout | null = null;
  /** Connections accepted, by backend URL. */
  readonly connections = new Map<string, number>();

  constructor(private readonly periodMs = 200) {
    this.server = net.createServer({ allowHalfOpen: true }, (client) => this.accept(client));
  }

  /** Listens on an ephemeral loopback port and starts probing; resolves with the balancer's URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.probing = setInterval(() => void this.probe(), this.periodMs);
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Adds a backend; it takes new connections once its probe passes. */
  add(url: string): void {
    const { hostname, port } = new URL(url);
    this.backends.push({ url, host: hostname, port: Number(port), ready: false });
  }

  /** Removes a backend (its pod is gone); its open connections stay as they are. */
  remove(url: string): void {
    const i = this.backends.findIndex((b) => b.url === url);
    if (i >= 0) this.backends.splice(i, 1);
  }

  /** Whether `url` is taking new connections. */
  isReady(url: string): boolean {
    return this.backends.some((b) => b.url === url && b.ready);
  }

  async close(): Promise<void> {
    if (this.probing) clearInterval(this.probing);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async probe(): Promise<void> {
    await Promise.all(
      this.backends.map(async (backend) => {
        try {
          const response = await fetch(`${backend.url}/readyz`, { signal: AbortSignal.timeout(this.periodMs * 5) });
          await response.arrayBuffer();
          backend.ready = response.status === 200;
        } catch {
          backend.ready = false;
        }
      }),
    );
  }

  private accept(client: Socket): void {
    const ready = this.backends.filter((b) => b.ready);
    if (ready.length === 0) return void client.destroy();
    const backend = ready[this.next++ % ready.length];
    this.connections.set(backend.url, (this.connections.get(backend.url) ?? 0) + 1);
    const upstream = net.connect({ host: backend.host, port: backend.port, allowHalfOpen: true });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    }
    // A reset on one side is a reset on the other.
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
