/**
 * @module audio/mp3-worker
 * The MP3 encoder thread (see audio/mp3-thread): LAME streams of many
 * requests, each under the id the event loop gave it, one message at a time
 * in the order sent, so every stream's frames come back in order.
 */
import { parentPort } from 'node:worker_threads';
import { createMp3Stream, type Mp3Stream } from './mp3.js';

/** A call on a stream; the thread answers each with one reply. */
export type Mp3Call =
  | { stream: number; op: 'open'; sampleRate: number; bitRate: number }
  | { stream: number; op: 'encode'; samples: Float32Array }
  | { stream: number; op: 'end' };
export type Mp3Request = (Mp3Call & { seq: number }) | { stream: number; op: 'drop' };
export type Mp3Reply = { seq: number; bytes: Uint8Array } | { seq: number; error: string };

const port = parentPort;
if (port) {
  const streams = new Map<number, Mp3Stream>();
  /** Opening is async (the wasm instance); later messages of the stream wait for it, in order. */
  let chain: Promise<void> = Promise.resolve();
  const answer = async (request: Mp3Request): Promise<void> => {
    if (request.op === 'drop') {
      streams.delete(request.stream);
      return;
    }
    try {
      let bytes: Uint8Array;
      if (request.op === 'open') {
        streams.set(request.stream, await createMp3Stream(request.sampleRate, request.bitRate));
        bytes = new Uint8Array(0);
      } else {
        const stream = streams.get(request.stream);
        if (!stream) throw new Error(`no mp3 stream ${request.stream}`);
        if (request.op === 'encode') bytes = stream.encode(request.samples);
        else {
          bytes = stream.flush();
          streams.delete(request.stream);
        }
      }
      // The bytes are this thread's own copy: moved, not copied again.
      port.postMessage({ seq: request.seq, bytes } satisfies Mp3Reply, [bytes.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ seq: request.seq, error: err instanceof Error ? err.message : String(err) } satisfies Mp3Reply);
    }
  };
  port.on('message', (request: Mp3Request) => {
    chain = chain.then(() => answer(request));
  });
}
