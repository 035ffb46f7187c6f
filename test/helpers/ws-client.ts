/**
 * @module test/helpers/ws-client
 * A raw `ws` client that records every server event and lets a test wait
 * for the event it expects.
 */
import WebSocket from 'ws';

export type Event = Record<string, any>;

export class TestSocket {
  readonly events: Event[] = [];
  private waiters: (() => void)[] = [];
  closeCode: number | null = null;
  closeReason = '';

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) throw new Error('the server sent a binary frame');
      this.events.push(JSON.parse(String(data)));
      this.poke();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = String(reason);
      this.poke();
    });
  }

  static open(url: string, headers: Record<string, string> = {}, query = '', path = '/tts/websocket'): Promise<TestSocket> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + path + query, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new TestSocket(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body })));
      });
      ws.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  private poke(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits until `predicate` holds for some recorded event; returns it. */
  async waitFor(predicate: (e: Event) => boolean, timeoutMs = 10_000): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (this.closeCode !== null) throw new Error(`socket closed (${this.closeCode} ${this.closeReason}) while waiting`);
      const left = deadline - Date.now();
      if (left <= 0) {
        const recent = this.events.slice(-5).map((e) => [e.type, e.context_id, e.error_code]);
        throw new Error(`timed out after ${this.events.length} events; the last: ${JSON.stringify(recent)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  waitForClose(timeoutMs = 10_000): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.closeCode !== null) return resolve(this.closeCode);
      const timer = setTimeout(() => reject(new Error('socket did not close')), timeoutMs);
      this.ws.once('close', (code) => (clearTimeout(timer), resolve(code)));
    });
  }

  of(contextId: string, type?: string): Event[] {
    return this.events.filter((e) => e.context_id === contextId && (!type || e.type === type));
  }

  audio(contextId: string): Buffer {
    return Buffer.concat(this.of(contextId, 'chunk').map((e) => Buffer.from(e.data, 'base64')));
  }

  close(): void {
    this.ws.close(1000, 'OK');
  }
}
