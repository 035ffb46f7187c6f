/**
 * @module bench/bare-child
 * The gateway benchmark's reference: a bare `node:http` server that reads the
 * request body, parses it as JSON and answers with a pre-made clip of a given
 * byte size (the size of Voicegate's answer to the same request) and the same
 * content type, in one `end()` with its Content-Length. An optional third
 * argument, a JSON object of headers, is sent with every answer too (the
 * other headers of Voicegate's answer, so both put the same bytes on the
 * wire). Prints `{"url", "pid"}` as one JSON line once it listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportReady } from './lib/child.js';

const size = Number(process.argv[2]);
const contentType = process.argv[3] ?? 'application/octet-stream';
const extra = JSON.parse(process.argv[4] ?? '{}') as Record<string, string>;
if (!Number.isInteger(size) || size < 0) throw new Error(`usage: bare-child <clip bytes> [content-type] [headers JSON]; got ${process.argv[2]}`);
const headers = { ...extra, 'content-type': contentType, 'content-length': size };

// A 440 Hz tone as s16le, so the bytes are audio-like rather than zeros.
const clip = Buffer.alloc(size);
for (let i = 0; i + 1 < size; i += 2) clip.writeInt16LE(Math.round(16000 * Math.sin((2 * Math.PI * 440 * (i / 2)) / 24000)), i);

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_json"}');
      return;
    }
    res.writeHead(200, headers).end(clip);
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  reportReady({ url: `http://127.0.0.1:${port}`, pid: process.pid });
});

process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
