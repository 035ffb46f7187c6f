/**
 * @module audio/mp3-thread
 * MP3 encoding on threads of their own. LAME costs more CPU than eSpeak NG
 * spends making the audio; on the event loop it made one thread the limit of
 * every MP3 request, with the engine's workers waiting on it. Here the event
 * loop only hands samples over and gets frames back, and LAME runs beside the
 * engine on whichever core is free. The bytes are the same as in-process
 * encoding (audio/mp3). A stream stays on the thread it opened on (LAME's
 * state lives there); a new stream goes to an idle thread, else to a new one
 * up to the limit, else to the thread with the fewest.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Mp3Call, Mp3Reply, Mp3Request } from './mp3-worker.js';

/** An MP3 stream whose calls answer once the encoder thread has run them. */
export interface Mp3ThreadStream {
  /** Encodes the next chunk; may give nothing while LAME fills a frame. */
  encode(samples: Float32Array): Promise<Uint8Array>;
  /** The last frames; the stream is finished afterwards. */
  flush(): Promise<Uint8Array>;
  /** Frees the stream on the thread (a request that ends early); safe to call at any time. */
  close(): void;
}

/** Threads started at most: one per core, up to two (BENCHMARKS.md, MP3 row). */
export const MP3_THREADS = Math.max(1, Math.min(2, availableParallelism()));

interface Waiting {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: Error) => void;
}

class EncoderThread {
  /** Streams open on this thread. */
  streams = 0;
  alive = true;
  private readonly worker = new Worker(new URL('./mp3-worker.js', import.meta.url));
  private readonly waiting = new Map<number, Waiting>();
  private nextSeq = 1;

  constructor(onGone: (t: EncoderThread) => void) {
    this.worker.unref();
    this.worker.on('message', (reply: Mp3Reply) => {
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
    this.worker.on('exit', (code) => fail(new Error(`the MP3 encoder thread stopped (code ${code})`)));
  }

  call(message: Mp3Call): Promise<Uint8Array> {
    if (!this.alive) return Promise.reject(new Error('the MP3 encoder thread stopped'));
    return new Promise<Uint8Array>((resolve, reject) => {
      const seq = this.nextSeq++;
      this.waiting.set(seq, { resolve, reject });
      this.worker.ref(); // a call in flight keeps the process alive; an idle thread does not
      this.worker.postMessage({ ...message, seq } satisfies Mp3Request);
    });
  }

  drop(stream: number): void {
    if (this.alive) this.worker.postMessage({ stream, op: 'drop' } satisfies Mp3Request);
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
  if (threads.length < MP3_THREADS) {
    const t = new EncoderThread((gone) => threads.splice(threads.indexOf(gone), 1));
    threads.push(t);
    return t;
  }
  return threads.reduce((a, b) => (b.streams < a.streams ? b : a));
}

/** Opens a mono CBR stream on an encoder thread; rejects with mp3BitRateProblem's message for unsupported pairs. */
export async function openMp3ThreadStream(sampleRate: number, bitRate: number): Promise<Mp3ThreadStream> {
  const thread = leastBusy();
  const stream = nextStream++;
  await thread.call({ stream, op: 'open', sampleRate, bitRate });
  thread.streams++;
  let open = true;
  const handle: Mp3ThreadStream = {
    encode: (samples) => thread.call({ stream, op: 'encode', samples }),
    flush() {
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
