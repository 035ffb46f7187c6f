/**
 * @module test/helpers/slow-reader
 * Clients that read at playback speed, as a player does: an HTTP response
 * read so many bytes a second, and a WebSocket paused whenever it is ahead
 * of its pace. A server that makes audio faster than real time leaves the
 * rest in the sockets' buffers meanwhile.
 */
import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';

/**
 * Reads `response` at `bytesPerSecond` (a player at playback speed); resolves with its length and
 * when its connection closed: the client closes it once the server's FIN, after the last byte, has
 * reached its process (it may still have the last second or so to read from its own buffers).
 */
export function readAtPace(response: IncomingMessage, bytesPerSecond: number): Promise<{ bytes: number; closedAt: number; text: string }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let closedAt = 0;
    response.socket.once('close', () => (closedAt = performance.now()));
    const chunks: Buffer[] = [];
    response.pause();
    const tick = setInterval(() => {
      const n = Math.min(bytesPerSecond / 10, response.readableLength);
      const chunk = n > 0 ? (response.read(n) as Buffer | null) : (response.read(0), null);
      if (chunk) {
        bytes += chunk.length;
        chunks.push(chunk);
      }
    }, 100);
    response.once('end', () => {
      clearInterval(tick);
      resolve({ bytes, closedAt, text: Buffer.concat(chunks).toString('latin1') });
    });
    response.once('aborted', () => (clearInterval(tick), reject(new Error(`cut after ${bytes} bytes`))));
    response.once('error', (err) => (clearInterval(tick), reject(err)));
  });
}

/**
 * Paces `ws` as `readAtPace` paces a response, on the same 100 ms clock: its socket is read only
 * while the bytes of the messages received are behind `bytesPerSecond` since the call. Returns a
 * function that stops pacing.
 */
export function paceWebSocket(ws: WebSocket, bytesPerSecond: number): () => void {
  const start = performance.now();
  let bytes = 0;
  const onMessage = (data: WebSocket.RawData) => {
    bytes += Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    if (bytes > ((performance.now() - start) / 1000) * bytesPerSecond) ws.pause();
  };
  const tick = setInterval(() => {
    if (bytes <= ((performance.now() - start) / 1000) * bytesPerSecond) ws.resume();
  }, 100);
  ws.on('message', onMessage);
  return () => {
    clearInterval(tick);
    ws.off('message', onMessage);
    ws.resume();
  };
}
