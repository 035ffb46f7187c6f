/**
 * @module audio/encoder-thread
 * MP3 and Ogg Opus encoding on threads of their own. LAME costs more CPU
 * than eSpeak NG spends making the audio, and libopus about as much as LAME
 * (4–5 ms per audio second at 64 kbit/s and up, 11 ms at 32 kbit/s, against
 * LAME's 2–6 ms, on the reference machine); on the event loop LAME made one
 * thread the limit of every MP3 request, with the engine's workers waiting
 * on it. Here the event loop only hands samples over and gets bytes back,
 * and the encoders run beside the engine on whichever core is free. The
 * bytes are the same as in-process encoding (audio/mp3, audio/opus). A
 * stream stays on the thread it opened on (its encoder's state lives there);
 * a new stream, of either codec, goes to an idle thread, else to a new one
 * up to the limit, else to the thread with the fewest.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EncoderCall, EncoderReply, EncoderRequest, OpenStream, ThreadCodec } from './encoder-worker.js';

/** A stream whose calls answer once the encoder thread has run them. */
export interface ThreadStream {
  /** Encodes the next chunk; may give nothing while a frame fills. */
  encode(samples: Float32Array): Promise<Uint8Array>;
  /** The last bytes; the stream is finished afterwards. */
  flush(): Promise<Uint8Array>;
  /** Frees the stream on the thread (a request that ends early); safe to call at any time. */
  close(): void;
}

/** Threads started at most: one per core, up to two (docs/benchmarks-history.md, MP3 row). */
export const ENCODER_THREADS = Math.max(1, Math.min(2, availableParallelism()));

interface Waiting {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: Error) => void;
}

class EncoderThread {
  /** Streams open on this thread. */
  streams = 0;
  alive = true;
  private readonly worker = new Worker(new URL('./encoder-worker.js', import.meta.url));
  private readonly waiting = new Map<number, Waiting>();
  private nextSeq = 1;

  constructor(onGone: (t: EncoderThread) => void) {
    this.worker.unref();
    this.worker.on('message', (reply: EncoderReply) => {
      const w = this.waiting.get(reply.seq);
      if (!w) return;
      this.waiting.delete(reply.seq);
      if (this.waiting.size === 0) this.worker.unref();
      if ('error' in reply) w.reject(new Error(reply.error));
      else w.resolve(reply.bytes);
    });
    const fail = (err: Error) => {
      if (!this.alive) return;
      this.alive = false; // its streams are gone with it; new streams go to a new thread
      onGone(this);
      const pending = [...this.waiting.values()];
      this.waiting.clear();
      for (const w of pending) w.reject(err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the encoder thread stopped (code ${code})`)));
  }

  call(message: EncoderCall): Promise<Uint8Array> {
    if (!this.alive) return Promise.reject(new Error('the encoder thread stopped'));
    return new Promise<Uint8Array>((resolve, reject) => {
      const seq = this.nextSeq++;
      this.waiting.set(seq, { resolve, reject });
      this.worker.ref(); // a call in flight keeps the process alive; an idle thread does not
      this.worker.postMessage({ ...message, seq } satisfies EncoderRequest);
    });
  }

  drop(stream: number): void {
    if (this.alive) this.worker.postMessage({ stream, op: 'drop' } satisfies EncoderRequest);
  }
}

const threads: EncoderThread[] = [];
let nextStream = 1;

/** Safety net for a stream dropped without close() or flush() (a consumer that stopped iterating). */
const leakGuard = new FinalizationRegistry<{ thread: EncoderThread; stream: number }>(({ thread, stream }) => {
  thread.streams--;
  thread.drop(stream);
});

function leastBusy(): EncoderThread {
  // A new thread takes ~40 ms to start: one with nothing to do is used first.
  const idle = threads.find((t) => t.streams === 0);
  if (idle) return idle;
  if (threads.length < ENCODER_THREADS) {
    const t = new EncoderThread((gone) => threads.splice(threads.indexOf(gone), 1));
    threads.push(t);
    return t;
  }
  return threads.reduce((a, b) => (b.streams < a.streams ? b : a));
}

/**
 * Opens a stream on an encoder thread; rejects with the codec's own message (mp3BitRateProblem,
 * opusFormatProblem) for formats it cannot make.
 */
export async function openThreadStream(params: OpenStream): Promise<ThreadStream> {
  const codec: ThreadCodec = params.codec;
  const thread = leastBusy();
  const stream = nextStream++;
  await thread.call({ stream, op: 'open', ...params });
  thread.streams++;
  let open = true;
  const handle: ThreadStream = {
    // After flush() or close() the thread no longer has the stream: say so without asking it.
    encode: (samples) => (open ? thread.call({ stream, op: 'encode', samples }) : Promise.reject(new Error(`no ${codec} stream ${stream}`))),
    flush() {
      if (!open) return Promise.reject(new Error(`no ${codec} stream ${stream}`));
      finish();
      return thread.call({ stream, op: 'end' });
    },
    close() {
      if (finish()) thread.drop(stream);
    },
  };
  const finish = () => {
    if (!open) return false;
    open = false;
    thread.streams--;
    leakGuard.unregister(handle);
    return true;
  };
  leakGuard.register(handle, { thread, stream }, handle);
  return handle;
}

/** Opens a mono CBR MP3 stream on an encoder thread; rejects with mp3BitRateProblem's message for unsupported pairs. */
export function openMp3ThreadStream(sampleRate: number, bitRate: number): Promise<ThreadStream> {
  return openThreadStream({ codec: 'mp3', sampleRate, bitRate });
}

/**
 * Opens a mono Ogg Opus stream on an encoder thread (pages closed at every encode() when
 * `streaming`); rejects with opusFormatProblem's message for unsupported pairs.
 */
export function openOpusThreadStream(sampleRate: number, bitRate: number, options: { streaming: boolean; serial?: number }): Promise<ThreadStream> {
  return openThreadStream({ codec: 'opus', sampleRate, bitRate, ...options });
}
