/**
 * @module test/helpers/fault-proxy
 * A small HTTP proxy in front of a provider that injects faults on demand:
 * the provider "down" (connections refused, health probes included), an
 * error status (503, 429 with Retry-After), the first byte of the answer
 * held back, or the answer cut after some bytes. It records every request's
 * path and headers, so a test can see what the gateway sent.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  | { kind: 'pass' }
  | { kind: 'down' }
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'cut'; afterBytes: number };

export interface FaultProxy {
  url: string;
  /** Applies to speech requests (POST); health probes (GET) see only `down`. */
  fault: Fault;
  requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const proxy: FaultProxy = { url: '', fault: { kind: 'pass' }, requests: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    proxy.requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers });
    const fault = proxy.fault;
    if (fault.kind === 'down') return req.socket.destroy();
    const speech = req.method === 'POST';
    if (speech && fault.kind === 'status') {
      req.resume();
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}) });
      return res.end(JSON.stringify({ detail: { status: 'injected', message: `injected ${fault.status}` } }));
    }
    const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (answer) => {
      const forward = () => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (speech && fault.kind === 'cut') {
          let sent = 0;
          answer.on('data', (bytes: Buffer) => {
            if (sent >= fault.afterBytes) return;
            const part = bytes.subarray(0, fault.afterBytes - sent);
            sent += part.length;
            res.write(part);
            // Flushed, then the connection dies mid-body.
            if (sent >= fault.afterBytes) setTimeout(() => res.socket?.destroy(), 20);
          });
          return;
        }
        answer.pipe(res);
      };
      if (speech && fault.kind === 'delay') {
        const timer = setTimeout(forward, fault.ms);
        res.on('close', () => {
          clearTimeout(timer);
          answer.destroy();
        });
      } else forward();
    });
    upstream.on('error', () => res.socket?.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
