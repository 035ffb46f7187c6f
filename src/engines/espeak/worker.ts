/**
 * @module engines/espeak/worker
 * One eSpeak NG instance in a worker thread of the pool. It speaks one job at
 * a time and hands each chunk eSpeak produces, with its word events, to the
 * pool's worker half (`engines/worker-pool/serve`), which posts, batches and
 * pauses for the consumer; between chunks eSpeak's callback asks it whether
 * the job was cancelled. It reports the pitch range each variant and voice
 * file sets, and writes a job's own variant (a mix's pitch range) into
 * eSpeak's in-memory data before speaking with it.
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

/** The part of Emscripten's file system the worker uses: eSpeak reads its data from it. */
interface EspeakFiles {
  readdir(path: string): string[];
  readFile(path: string, options: { encoding: 'utf8' }): string;
  writeFile(path: string, data: string): void;
}

const { default: EspeakModule } = await import('@echogarden/espeak-ng-emscripten');
const module = (await EspeakModule()) as { eSpeakNGWorker: new () => EspeakWorker; FS: EspeakFiles };
const espeak = new module.eSpeakNGWorker();
espeak.set_volume(100);

const DATA = '/usr/share/espeak-ng-data';
const VARIANTS = `${DATA}/voices/!v`;
const PITCH_LINE = /^[ \t]*pitch[ \t]+(\d+)[ \t]+(\d+)/m;

/** The `pitch <low> <high>` a voice or variant file sets, if it sets one. */
function pitchRangeOf(path: string): [number, number] | null {
  try {
    const match = PITCH_LINE.exec(module.FS.readFile(path, { encoding: 'utf8' }));
    return match ? [Number(match[1]), Number(match[2])] : null;
  } catch {
    return null;
  }
}

function pitchRanges(voices: EspeakListedVoice[]): EspeakReady['pitchRanges'] {
  const ranges: EspeakReady['pitchRanges'] = { variants: {}, voices: {} };
  for (const name of module.FS.readdir(VARIANTS)) {
    const range = name.startsWith('.') ? null : pitchRangeOf(`${VARIANTS}/${name}`);
    if (range) ranges.variants[name] = range;
  }
  for (const voice of voices) {
    const range = pitchRangeOf(`${DATA}/lang/${voice.identifier}`);
    if (range) ranges.voices[voice.identifier] = range;
  }
  return ranges;
}

const written = new Set<string>();
/** Writes a job's variant once: its base variant's file with the pitch range replaced (or added). */
function writeVariant({ name, from, pitch }: NonNullable<SynthesizeJob['variant']>): void {
  if (written.has(name)) return;
  let text = '';
  try {
    if (from) text = module.FS.readFile(`${VARIANTS}/${from}`, { encoding: 'utf8' });
  } catch {
    // An unknown base speaks as the voice's own, with the range set.
  }
  const line = `pitch ${pitch[0]} ${pitch[1]}`;
  text = PITCH_LINE.test(text) ? text.replace(PITCH_LINE, line) : `${text}\n${line}\n`;
  module.FS.writeFile(`${VARIANTS}/${name}`, text);
  written.add(name);
}

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

const listed = espeak.list_voices();
serveJobs<SynthesizeJob, Int16Array, RawWordEvent, EspeakReady>(
  { sampleRate: espeak.get_samplerate(), voices: listed, pitchRanges: pitchRanges(listed) },
  (job, output) => {
    if (job.variant) writeVariant(job.variant);
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
