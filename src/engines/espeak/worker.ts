/**
 * @module engines/espeak/worker
 * One eSpeak NG instance in a worker thread. It speaks one job at a time,
 * posting each chunk as eSpeak produces it; between chunks it checks the
 * shared control block to stop on cancel and to wait while the consumer is
 * too far behind (backpressure without buffering a whole clip in memory).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EspeakListedVoice } from '../../voices/builtin.js';
import { CONTROL, type RawWordEvent, type SynthesizeMessage, type WorkerMessage } from './protocol.js';

interface EspeakEvent {
  type: string;
  text_position: number;
  word_length: number;
  audio_position: number;
}

interface EspeakWorker {
  set_voice(name: string): number;
  set_rate(rate: number): void;
  set_pitch(pitch: number): void;
  set_volume(volume: number): void;
  get_samplerate(): number;
  list_voices(): EspeakListedVoice[];
  synthesize(text: string, callback: (pcm: Int16Array, events: EspeakEvent[] | undefined) => boolean): void;
}

const control = new Int32Array(workerData.control as SharedArrayBuffer);
const port = parentPort!;

function post(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

const { default: EspeakModule } = await import('@echogarden/espeak-ng-emscripten');
const module = (await EspeakModule()) as { eSpeakNGWorker: new () => EspeakWorker };
const espeak = new module.eSpeakNGWorker();
espeak.set_volume(100);

let currentVoice = '';
function useVoice(name: string): void {
  if (name === currentVoice) return;
  // eSpeak returns a non-zero status for an unknown voice and keeps the old
  // one; fall back to its default rather than speak in a stale voice.
  if (espeak.set_voice(name) !== 0) espeak.set_voice('en-us');
  currentVoice = name;
}

function cancelled(): boolean {
  return Atomics.load(control, CONTROL.cancel) !== 0;
}

/** Blocks while the consumer holds `highWater` unread chunks, unless cancelled. */
function awaitConsumer(highWater: number): void {
  for (;;) {
    const inFlight = Atomics.load(control, CONTROL.inFlight);
    if (inFlight < highWater || cancelled()) return;
    Atomics.wait(control, CONTROL.inFlight, inFlight, 1000);
  }
}

/**
 * eSpeak callbacks (~100 ms of audio each) gathered into one message once the first audio has gone
 * out alone: first audio is not delayed, and the main thread handles a fifth of the messages.
 */
const BATCH = 5;

/** Audio and words gathered since the last message. */
class Pending {
  parts: Int16Array[] = [];
  samples = 0;
  words: RawWordEvent[] = [];
  /** eSpeak callbacks gathered: the unit the pool's high-water mark counts. */
  units = 0;

  take(): { pcm: Int16Array; words: RawWordEvent[]; units: number } {
    let pcm = this.parts[0] ?? new Int16Array(0);
    if (this.parts.length > 1) {
      pcm = new Int16Array(this.samples);
      let at = 0;
      for (const part of this.parts) {
        pcm.set(part, at);
        at += part.length;
      }
    }
    const taken = { pcm, words: this.words, units: this.units };
    this.parts = [];
    this.samples = 0;
    this.words = [];
    this.units = 0;
    return taken;
  }
}

function speak(job: SynthesizeMessage): void {
  useVoice(job.voice);
  espeak.set_rate(job.rate);
  espeak.set_pitch(job.pitch);
  // A batch never holds more than half the high-water mark, so the pause point still means what it says.
  const batch = Math.max(1, Math.min(BATCH, Math.floor(job.highWater / 2)));
  const pending = new Pending();
  let audioSent = false;
  const send = () => {
    const { pcm, words, units } = pending.take();
    audioSent ||= pcm.length > 0; // read before the transfer detaches it
    Atomics.add(control, CONTROL.inFlight, units);
    post({ type: 'chunk', jobId: job.jobId, pcm, words, units }, [pcm.buffer as ArrayBuffer]);
    awaitConsumer(job.highWater);
  };
  espeak.synthesize(job.text, (pcm, events) => {
    if (cancelled()) return true;
    const words: RawWordEvent[] = [];
    for (const e of events ?? []) {
      if (e.type === 'word') words.push({ position: e.text_position, length: e.word_length, ms: e.audio_position });
    }
    if (pcm.length === 0 && words.length === 0) return false;
    // The callback's array is a view into wasm memory: copy before transfer. -32768 becomes -32767,
    // so the samples are exactly floatToInt16 of the pool's Float32 form (engines/pcm16).
    const copy = pcm.slice();
    for (let i = copy.indexOf(-32768); i >= 0; i = copy.indexOf(-32768, i + 1)) copy[i] = -32767;
    if (copy.length > 0) pending.parts.push(copy);
    pending.samples += copy.length;
    pending.words.push(...words);
    pending.units++;
    if (!audioSent || pending.units >= batch) send();
    return cancelled();
  });
  if (pending.units > 0 && !cancelled()) send();
}

// Warm up: the first synthesis compiles the hot paths.
useVoice('en-us');
espeak.synthesize('Ready.', () => false);
post({ type: 'ready', sampleRate: espeak.get_samplerate(), voices: espeak.list_voices() });

port.on('message', (job: SynthesizeMessage) => {
  try {
    speak(job);
    post({ type: 'end', jobId: job.jobId, cancelled: cancelled() });
  } catch (err) {
    post({ type: 'failed', jobId: job.jobId, message: err instanceof Error ? err.message : String(err) });
  }
});
