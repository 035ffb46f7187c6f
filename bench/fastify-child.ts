/**
 * @module bench/fastify-child
 * The audio cache benchmark's ceiling: a minimal Fastify server (no hooks,
 * no logger, Fastify's own JSON body parser) whose one route, `POST
 * /tts/bytes`, answers a pre-made clip of a given byte size with the given
 * content type and headers, as Voicegate answers a hit: what the framework
 * alone costs per request on the same machine. Arguments as bare-child's:
 * `<clip bytes> [content-type] [headers JSON]`. Prints `{"url", "pid"}` as
 * one JSON line once it listens.
 */
import Fastify from 'fastify';
import { reportReady } from './lib/child.js';

const size = Number(process.argv[2]);
const contentType = process.argv[3] ?? 'application/octet-stream';
const extra = JSON.parse(process.argv[4] ?? '{}') as Record<string, string>;
if (!Number.isInteger(size) || size < 0) throw new Error(`usage: fastify-child <clip bytes> [content-type] [headers JSON]; got ${process.argv[2]}`);

const clip = Buffer.alloc(size);
for (let i = 0; i + 1 < size; i += 2) clip.writeInt16LE(Math.round(16000 * Math.sin((2 * Math.PI * 440 * (i / 2)) / 24000)), i);

const app = Fastify({ logger: false });
app.post('/tts/bytes', (request, reply) => {
  if (typeof request.body !== 'object' || request.body === null) return reply.code(400).send({ error: 'invalid_json' });
  return reply.headers(extra).type(contentType).header('content-length', clip.length).send(clip);
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });
reportReady({ url, pid: process.pid });

process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0), () => process.exit(1));
});
