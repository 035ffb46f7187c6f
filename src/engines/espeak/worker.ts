/**
 * @module engines/espeak/worker
 * One eSpeak NG instance in a worker thread of the pool. It speaks one job at
 * a time and hands each chunk eSpeak produces, with its word events, to the
 * pool's worker half (`engines/worker-pool/serve`), which posts, batches and
 * pauses for the consumer; between chunks eSpeak's callback asks it whether
 * the job was cancelled.
 */
import type { EspeakListedVoice } from '../../voices/builtin.js';
import { serveJobs } from '../worker-pool/serve.js';
import type { EspeakReady, RawWordEvent, SynthesizeJob } from './protocol.js';

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

// Warm up: the first synthesis compiles the hot paths.
useVoice('en-us');
espeak.synthesize('Ready.', () => false);

serveJobs<SynthesizeJob, Int16Array, RawWordEvent, EspeakReady>(
  { sampleRate: espeak.get_samplerate(), voices: espeak.list_voices() },
  (job, output) => {
    useVoice(job.voice);
    espeak.set_rate(job.rate);
    espeak.set_pitch(job.pitch);
    espeak.synthesize(job.text, (pcm, events) => {
      if (output.cancelled()) return true;
      const words: RawWordEvent[] = [];
      for (const e of events ?? []) {
        if (e.type === 'word') words.push({ position: e.text_position, length: e.word_length, ms: e.audio_position });
      }
      // The callback's array is a view into wasm memory: copy before it is transferred. -32768 becomes
      // -32767, so the samples are exactly floatToInt16 of the engine's Float32 form (engines/pcm16).
      const copy = pcm.slice();
      for (let i = copy.indexOf(-32768); i >= 0; i = copy.indexOf(-32768, i + 1)) copy[i] = -32767;
      output.push(copy, words);
      return output.cancelled();
    });
  },
);
