/**
 * @module audio/encoder-worker
 * An encoder thread (see audio/encoder-thread): MP3 (LAME) and Ogg Opus
 * streams of many requests, each under the id the event loop gave it, one
 * message at a time in the order sent, so every stream's bytes come back in
 * order.
 */
import { parentPort } from 'node:worker_threads';
import { createMp3Stream } from './mp3.js';
import { createOggOpusStream } from './opus.js';

/** The codecs an encoder thread runs. */
export type ThreadCodec = 'mp3' | 'opus';

/** How to open a stream: the codec and its parameters. */
export type OpenStream =
  | { codec: 'mp3'; sampleRate: number; bitRate: number }
  | { codec: 'opus'; sampleRate: number; bitRate: number; streaming: boolean; serial?: number };

/** A call on a stream; the thread answers each with one reply. */
export type EncoderCall =
  | ({ stream: number; op: 'open' } & OpenStream)
  | { stream: number; op: 'encode'; samples: Float32Array }
  | { stream: number; op: 'end' };
export type EncoderRequest = (EncoderCall & { seq: number }) | { stream: number; op: 'drop' };
export type EncoderReply = { seq: number; bytes: Uint8Array } | { seq: number; error: string };

/** What the thread holds per stream: both codecs' streams have this shape. */
interface Stream {
  encode(samples: Float32Array): Uint8Array;
  flush(): Uint8Array;
  close?(): void;
}

function open(request: OpenStream): Promise<Stream> {
  if (request.codec === 'mp3') return createMp3Stream(request.sampleRate, request.bitRate);
  if (request.codec === 'opus') {
    return createOggOpusStream(request.sampleRate, request.bitRate, { streaming: request.streaming, serial: request.serial });
  }
  throw new Error(`unknown codec ${String((request as { codec: unknown }).codec)}`);
}

const port = parentPort;
if (port) {
  const streams = new Map<number, Stream>();
  /** Opening is async (the wasm instance); later messages of the stream wait for it, in order. */
  let chain: Promise<void> = Promise.resolve();
  const answer = async (request: EncoderRequest): Promise<void> => {
    if (request.op === 'drop') {
      streams.get(request.stream)?.close?.();
      streams.delete(request.stream);
      return;
    }
    try {
      let bytes: Uint8Array;
      if (request.op === 'open') {
        streams.set(request.stream, await open(request));
        bytes = new Uint8Array(0);
      } else {
        const stream = streams.get(request.stream);
        if (!stream) throw new Error(`no encoder stream ${request.stream}`);
        if (request.op === 'encode') bytes = stream.encode(request.samples);
        else {
          streams.delete(request.stream);
          bytes = stream.flush();
        }
      }
      // The bytes are this thread's own copy: moved, not copied again.
      port.postMessage({ seq: request.seq, bytes } satisfies EncoderReply, [bytes.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ seq: request.seq, error: err instanceof Error ? err.message : String(err) } satisfies EncoderReply);
    }
  };
  port.on('message', (request: EncoderRequest) => {
    chain = chain.then(() => answer(request));
  });
}
