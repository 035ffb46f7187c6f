/**
 * @module engines/espeak/pool
 * The embedded engine: eSpeak NG in a pool of worker threads. eSpeak blocks
 * the thread it speaks on, so each worker takes one job at a time; jobs wait
 * in a bounded queue (full → `engine_unavailable`). A worker that dies is
 * replaced and its job fails with `engine_error`; the server stays up.
 */
import { Worker } from 'node:worker_threads';
import { int16ToFloat } from '../../audio/pcm.js';
import { ApiError } from '../../errors/api-error.js';
import type { Logger } from '../../log/logger.js';
import type { EspeakListedVoice } from '../../voices/builtin.js';
import type { Voice } from '../../voices/voice.js';
import type { EngineChunk, EngineInfo, EngineInput, WordTiming } from '../engine.js';
import type { Int16Chunk, Int16Engine } from '../pcm16.js';
import { CONTROL, CONTROL_SLOTS, type RawWordEvent, type SynthesizeMessage, type WorkerMessage } from './protocol.js';
import { prepareText, wordAt, type PreparedText } from './text.js';

export interface EspeakPoolOptions {
  id: string;
  workers: number;
  /** Jobs that may wait for a worker; more are refused with `engine_unavailable`. */
  queueLimit: number;
  /** Chunks (~100 ms each) a worker may run ahead of a slow consumer before it pauses. */
  highWater: number;
  logger: Logger;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** One synthesis, from enqueue to its last chunk. */
class Job {
  readonly chunks: { pcm: Int16Array; words: RawWordEvent[]; units: number }[] = [];
  finished = false;
  error: unknown = null;
  slot: Slot | null = null;
  private wake: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly message: SynthesizeMessage,
    readonly prepared: PreparedText,
  ) {}

  notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  waitForChange(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  finish(error: unknown = null): void {
    if (this.finished) return;
    this.finished = true;
    this.error = error;
    this.notify();
  }
}

/** A worker thread and the job it is running. */
interface Slot {
  worker: Worker;
  control: Int32Array;
  job: Job | null;
  ready: boolean;
}

export class EspeakPool implements Int16Engine {
  readonly type = 'espeak';
  readonly id: string;
  sampleRate = 22050;
  /** eSpeak's own voice list, known once a worker is ready. */
  listedVoices: EspeakListedVoice[] = [];

  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextJobId = 1;
  private stopping = false;
  private started = false;
  private crashes = 0;

  constructor(private readonly options: EspeakPoolOptions) {
    this.id = options.id;
  }

  async start(): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < this.options.workers; i++) ready.push(this.spawn());
    await Promise.all(ready);
    this.started = true;
  }

  private spawn(): Promise<void> {
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
    const worker = new Worker(WORKER_URL, { workerData: { control: control.buffer } });
    const slot: Slot = { worker, control, job: null, ready: false };
    this.slots.push(slot);
    return new Promise((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          this.sampleRate = message.sampleRate;
          this.listedVoices = message.voices;
          slot.ready = true;
          resolve();
          this.dispatch();
          return;
        }
        this.onJobMessage(slot, message);
      });
      worker.on('error', (err) => {
        this.options.logger.error({ err, engine: this.id }, 'espeak worker failed');
      });
      worker.on('exit', (code) => {
        if (!slot.ready) reject(new Error(`espeak worker exited with code ${code} before it was ready`));
        this.onExit(slot, code);
      });
    });
  }

  private onJobMessage(slot: Slot, message: WorkerMessage): void {
    const job = slot.job;
    if (!job || message.type === 'ready' || message.jobId !== job.id) return;
    if (message.type === 'chunk') {
      job.chunks.push({ pcm: message.pcm, words: message.words, units: message.units });
      job.notify();
      return;
    }
    slot.job = null;
    job.slot = null;
    if (message.type === 'failed') job.finish(new ApiError('engine_error', { reason: '' }));
    else job.finish();
    if (message.type === 'failed') this.options.logger.error({ engine: this.id, reason: message.message }, 'espeak synthesis failed');
    this.dispatch();
  }

  private onExit(slot: Slot, code: number): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const job = slot.job;
    slot.job = null;
    if (job) {
      job.slot = null;
      job.finish(new ApiError('engine_error', { reason: ': the engine worker stopped unexpectedly' }));
    }
    if (this.stopping) return;
    this.crashes++;
    this.options.logger.warn({ engine: this.id, code, crashes: this.crashes }, 'espeak worker exited; replacing it');
    // Back off if workers keep dying at start so a broken install does not spin.
    const delay = Math.min(5000, 50 * 2 ** Math.min(this.crashes, 7));
    setTimeout(() => {
      if (this.stopping) return;
      this.spawn().then(
        () => (this.crashes = 0),
        (err) => this.options.logger.error({ err, engine: this.id }, 'espeak worker could not be replaced'),
      );
    }, delay).unref();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      job.slot = slot;
      // Reset before posting: the worker is idle, so nothing races these writes.
      Atomics.store(slot.control, CONTROL.cancel, 0);
      Atomics.store(slot.control, CONTROL.inFlight, 0);
      slot.worker.postMessage(job.message);
    }
  }

  isReady(): boolean {
    return this.started && !this.stopping && this.slots.some((s) => s.ready);
  }

  supportsVoice(voice: Voice): boolean {
    return voice.profiles.espeak !== undefined;
  }

  info(): EngineInfo {
    return {
      id: this.id,
      type: this.type,
      sampleRate: this.sampleRate,
      ready: this.isReady(),
      workers: this.slots.filter((s) => s.ready).length,
      busy: this.slots.filter((s) => s.job).length,
      queued: this.queue.length,
      /** Chunks made but not yet taken by consumers: bounded by highWater per running job. */
      bufferedChunks: this.slots.reduce((n, s) => n + (s.job?.chunks.length ?? 0), 0),
    };
  }

  synthesize(input: EngineInput, signal: AbortSignal): AsyncIterable<EngineChunk> {
    // ÷32767, the exact inverse of floatToInt16 for the worker's samples (never -32768).
    return this.run(input, signal, int16ToFloat);
  }

  /** eSpeak's own 16-bit samples, as the worker made them (see engines/pcm16). */
  synthesizeInt16(input: EngineInput, signal: AbortSignal): AsyncIterable<Int16Chunk> {
    return this.run(input, signal, (pcm) => pcm);
  }

  private run<T>(input: EngineInput, signal: AbortSignal, convert: (pcm: Int16Array) => T): AsyncIterable<{ samples: T; words?: WordTiming[] }> {
    const profile = input.voice.profiles.espeak;
    if (!profile) throw new ApiError('engine_error', { reason: `: voice ${input.voice.id} has no eSpeak profile` });
    if (!this.isReady()) throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
    if (this.queue.length >= this.options.queueLimit) throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
    const prepared = prepareText(input.text);
    const id = this.nextJobId++;
    const job = new Job(
      id,
      {
        type: 'synthesize',
        jobId: id,
        text: prepared.text,
        voice: profile.variant ? `${profile.voice}+${profile.variant}` : profile.voice,
        pitch: profile.pitch,
        rate: Math.round(profile.rate * input.speed),
        highWater: this.options.highWater,
      },
      prepared,
    );
    this.queue.push(job);
    this.dispatch();
    return this.consume(job, input.wordTimings, signal, convert);
  }

  private async *consume<T>(
    job: Job,
    wantWords: boolean,
    signal: AbortSignal,
    convert: (pcm: Int16Array) => T,
  ): AsyncGenerator<{ samples: T; words?: WordTiming[] }> {
    const onAbort = () => job.notify();
    signal.addEventListener('abort', onAbort);
    const rate = this.sampleRate;
    let pending: { word: string; start: number } | null = null;
    let emitted = 0;
    try {
      for (;;) {
        signal.throwIfAborted();
        const next = job.chunks.shift();
        if (next) {
          const slot = job.slot;
          if (slot) {
            Atomics.sub(slot.control, CONTROL.inFlight, next.units);
            Atomics.notify(slot.control, CONTROL.inFlight);
          }
          const chunk: { samples: T; words?: WordTiming[] } = { samples: convert(next.pcm) };
          if (wantWords) {
            const words: WordTiming[] = [];
            for (const event of next.words) {
              const start = event.ms / 1000;
              if (pending) words.push({ ...pending, end: start });
              pending = { word: wordAt(job.prepared, event.position, event.length), start };
            }
            if (words.length) chunk.words = words;
          }
          emitted += next.pcm.length;
          yield chunk;
          continue;
        }
        if (job.finished) {
          if (job.error) throw job.error;
          if (pending) yield { samples: convert(new Int16Array(0)), words: [{ ...pending, end: emitted / rate }] };
          return;
        }
        await job.waitForChange();
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.cancel(job);
    }
  }

  private cancel(job: Job): void {
    if (job.finished) return;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      job.finish();
      return;
    }
    const slot = job.slot;
    if (slot) {
      Atomics.store(slot.control, CONTROL.cancel, 1);
      Atomics.notify(slot.control, CONTROL.inFlight);
    }
    job.chunks.length = 0;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const job of this.queue.splice(0)) job.finish(new ApiError('engine_unavailable'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
    this.slots.length = 0;
  }

  /** Terminates a busy worker the way a crash would end it; for fault-injection tests and drills. */
  crashBusyWorker(): boolean {
    const slot = this.slots.find((s) => s.job !== null);
    if (!slot) return false;
    void slot.worker.terminate();
    return true;
  }
}
