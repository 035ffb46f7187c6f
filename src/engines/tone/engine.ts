/**
 * @module engines/tone/engine
 * A deterministic, near zero-cost engine: a sine tone per character. It lets
 * an operator load-test a deployment (or the benchmarks measure the gateway)
 * without the cost of real synthesis. Every voice is accepted; the voice id
 * picks the pitch so different voices sound different.
 */
import { floatToInt16 } from '../../audio/pcm.js';
import type { Voice } from '../../voices/voice.js';
import type { EngineChunk, EngineInfo, EngineInput, WordTiming } from '../engine.js';
import type { Int16Chunk, Int16Engine } from '../pcm16.js';

export interface ToneEngineOptions {
  id: string;
  sampleRate: number;
  /** Audio per character of text, in seconds. */
  secondsPerChar: number;
  /** Chunk length in seconds. */
  chunkSeconds: number;
}

function frequencyFor(voiceId: string): number {
  let hash = 0;
  for (const ch of voiceId) hash = (hash * 31 + ch.codePointAt(0)!) >>> 0;
  return 180 + (hash % 240);
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** A tone rendered once: one exact period, followed by one chunk's worth of its continuation. */
interface ToneTable {
  samples: Float32Array;
  /** The same samples as 16-bit PCM, made on first use. */
  pcm16: Int16Array | null;
  /** Samples after which the tone repeats exactly. */
  period: number;
}

/** Tables by frequency, rate and chunk length; few exist (one per voice pitch), so a small cap suffices. */
const tables = new Map<string, ToneTable>();
const MAX_TABLES = 64;
/** A sine of this peak is −20 dBFS RMS, the voices' loudness target, so the tone needs no gain. */
const TONE_AMPLITUDE = 0.1 * Math.SQRT2;

/** Chunks per allocation when copying a tone out for one request. */
const BLOCK_CHUNKS = 16;

/**
 * sin(2π·f·n/rate) with integer f and rate repeats every rate/gcd(f, rate) samples, so any chunk of
 * the tone is a contiguous run of this table starting at (offset mod period): synthesis is a copy.
 */
function toneTable(frequency: number, sampleRate: number, chunkLength: number): ToneTable {
  const key = `${frequency}:${sampleRate}:${chunkLength}`;
  let table = tables.get(key);
  if (table) return table;
  const period = sampleRate / gcd(frequency, sampleRate);
  const samples = new Float32Array(period + chunkLength);
  const step = (2 * Math.PI * frequency) / sampleRate;
  for (let n = 0; n < samples.length; n++) samples[n] = TONE_AMPLITUDE * Math.sin(step * (n % period));
  if (tables.size >= MAX_TABLES) tables.delete(tables.keys().next().value!);
  table = { samples, pcm16: null, period };
  tables.set(key, table);
  return table;
}

export class ToneEngine implements Int16Engine {
  readonly type = 'tone';
  /** Made at the loudness target already (TONE_AMPLITUDE). */
  readonly loudness = { keep: true } as const;
  readonly id: string;
  readonly sampleRate: number;
  private ready = false;

  constructor(private readonly options: ToneEngineOptions) {
    if (!Number.isInteger(options.sampleRate) || options.sampleRate <= 0) throw new RangeError(`invalid sample rate ${options.sampleRate}`);
    this.id = options.id;
    this.sampleRate = options.sampleRate;
  }

  async start(): Promise<void> {
    this.ready = true;
  }

  async stop(): Promise<void> {
    this.ready = false;
  }

  isReady(): boolean {
    return this.ready;
  }

  supportsVoice(_voice: Voice): boolean {
    return true;
  }

  info(): EngineInfo {
    return { id: this.id, type: this.type, sampleRate: this.sampleRate, ready: this.ready };
  }

  synthesize(input: EngineInput, signal: AbortSignal): AsyncGenerator<EngineChunk> {
    return this.chunks(input, signal, (table) => table.samples);
  }

  /** The same chunks as 16-bit PCM (see engines/pcm16): the table converted once, then copied from. */
  synthesizeInt16(input: EngineInput, signal: AbortSignal): AsyncGenerator<Int16Chunk> {
    return this.chunks(input, signal, (table) => (table.pcm16 ??= floatToInt16(table.samples)));
  }

  private async *chunks<T extends Float32Array | Int16Array>(
    input: EngineInput,
    signal: AbortSignal,
    pick: (table: ToneTable) => T,
  ): AsyncGenerator<{ samples: T; words?: WordTiming[] }> {
    const chars = [...input.text];
    const total = Math.round((chars.length * this.options.secondsPerChar * this.sampleRate) / input.speed);
    const chunkLength = Math.max(1, Math.round(this.options.chunkSeconds * this.sampleRate));
    const tone = toneTable(frequencyFor(input.voice.id), this.sampleRate, chunkLength);
    const source = pick(tone);
    const perChar = total / Math.max(chars.length, 1);
    let word = '';
    let wordStart = 0;
    let charIndex = 0;
    /** Where the current character, and the current word, stand in the text (UTF-16 code units). */
    let at = 0;
    let wordFrom = 0;
    // Chunks are copied out of the shared table into blocks owned by this request (consumers own their
    // chunks), a few chunks per block so a long text neither allocates per chunk nor all at once.
    const Samples = source.constructor as new (length: number) => T;
    let block = new Samples(0);
    let blockStart = 0;
    for (let offset = 0; offset < total; offset += chunkLength) {
      signal.throwIfAborted();
      const length = Math.min(chunkLength, total - offset);
      if (offset + length > blockStart + block.length) {
        block = new Samples(Math.min(total - offset, BLOCK_CHUNKS * chunkLength));
        blockStart = offset;
      }
      const start = offset % tone.period;
      const samples = block.subarray(offset - blockStart, offset - blockStart + length) as T;
      samples.set(source.subarray(start, start + length));
      const chunk: { samples: T; words?: WordTiming[] } = { samples };
      if (input.wordTimings) {
        // Words are the whitespace-separated runs of characters spoken in this chunk.
        const words = [];
        const endChar = Math.min(chars.length, Math.floor((offset + samples.length) / perChar));
        for (; charIndex < endChar; charIndex++) {
          const ch = chars[charIndex];
          if (/\s/u.test(ch)) {
            if (word) words.push({ word, start: wordStart, end: (charIndex * perChar) / this.sampleRate, from: wordFrom, to: at });
            word = '';
          } else {
            if (!word) {
              wordStart = (charIndex * perChar) / this.sampleRate;
              wordFrom = at;
            }
            word += ch;
          }
          at += ch.length;
        }
        if (offset + samples.length >= total && word) words.push({ word, start: wordStart, end: total / this.sampleRate, from: wordFrom, to: at });
        if (words.length) chunk.words = words;
      }
      yield chunk;
    }
  }
}
