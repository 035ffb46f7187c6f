/**
 * @module test/helpers/wyoming-client
 * A Wyoming client that frames as the protocol's reference library (the
 * Python `wyoming` package Home Assistant uses) does: a header line in
 * Python's JSON spacing with `version`, non-empty data always in a data
 * block, the payload after it; and reads as it does: a line, then
 * `data_length` bytes merged over the header's data, then the payload. Its
 * reader is written here on its own, not taken from the server's codec.
 */
import { connect, type Socket } from 'node:net';

export interface ClientEvent {
  type: string;
  data: Record<string, unknown>;
  payload: Buffer | null;
  /** The header line's length in bytes, without its newline. */
  headerBytes: number;
}

/** `json.dumps` with Python's default separators (`", "`, `": "`), ensure_ascii off. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return '[' + value.map(pythonJson).join(', ') + ']';
  if (typeof value === 'object') return '{' + Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`).join(', ') + '}';
  return JSON.stringify(value);
}

/** One event's bytes exactly as `wyoming.event.async_write_event` writes them. */
export function frame(type: string, data: Record<string, unknown> | null = null, payload: Buffer | null = null): Buffer {
  const header: Record<string, unknown> = { type, version: '1.9.0' };
  const parts: Buffer[] = [];
  let block: Buffer | null = null;
  if (data && Object.keys(data).length > 0) {
    block = Buffer.from(pythonJson(data), 'utf8');
    header.data_length = block.length;
  }
  if (payload && payload.length > 0) header.payload_length = payload.length;
  parts.push(Buffer.from(pythonJson(header) + '\n', 'utf8'));
  if (block) parts.push(block);
  if (payload && payload.length > 0) parts.push(payload);
  return Buffer.concat(parts);
}

export class WyomingClient {
  private buffer = Buffer.alloc(0);
  private readonly events: ClientEvent[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
      this.wake();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, host = '127.0.0.1'): Promise<WyomingClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new WyomingClient(socket)));
      socket.once('error', reject);
    });
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  private parse(): void {
    for (;;) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline < 0) return;
      const header = JSON.parse(this.buffer.subarray(0, newline).toString('utf8')) as Record<string, unknown>;
      const dataLength = (header.data_length as number | undefined) ?? 0;
      const payloadLength = (header.payload_length as number | undefined) ?? 0;
      const start = newline + 1;
      if (this.buffer.length < start + dataLength + payloadLength) return;
      const data = { ...((header.data as Record<string, unknown> | undefined) ?? {}) };
      if (dataLength > 0) Object.assign(data, JSON.parse(this.buffer.subarray(start, start + dataLength).toString('utf8')));
      const payload = payloadLength > 0 ? Buffer.from(this.buffer.subarray(start + dataLength, start + dataLength + payloadLength)) : null;
      this.events.push({ type: header.type as string, data, payload, headerBytes: newline });
      this.buffer = this.buffer.subarray(start + dataLength + payloadLength);
    }
  }

  send(type: string, data: Record<string, unknown> | null = null, payload: Buffer | null = null): void {
    this.socket.write(frame(type, data, payload));
  }

  sendRaw(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** The next event; null once the server has closed the connection. Fails after `timeoutMs`. */
  async next(timeoutMs = 30_000): Promise<ClientEvent | null> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const event = this.events.shift();
      if (event) return event;
      if (this.ended) return null;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no Wyoming event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => (clearTimeout(timer), resolve());
      });
    }
  }

  /** Events up to and including the first that `last` accepts (or the close). */
  async until(last: (event: ClientEvent) => boolean, timeoutMs = 60_000): Promise<ClientEvent[]> {
    const out: ClientEvent[] = [];
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - performance.now()));
      if (!event) return out;
      out.push(event);
      if (last(event)) return out;
    }
  }

  close(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
