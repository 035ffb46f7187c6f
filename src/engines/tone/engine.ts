/**
 * @module engines/tone/engine
 * A deterministic, near zero-cost engine: a sine tone per character. It lets
 * an operator load-test a deployment (or the benchmarks measure the gateway)
 * without the cost of real synthesis. Every voice is accepted; the voice id
 * picks the pitch so different voices sound different.
 */
import type { Voice } from '../../voices/voice.js';
import type { Engine, EngineChunk, EngineInfo, EngineInput } from '../engine.js';

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

export class ToneEngine implements Engine {
  readonly type = 'tone';
  readonly id: string;
  readonly sampleRate: number;
  private ready = false;

  constructor(private readonly options: ToneEngineOptions) {
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

  async *synthesize(input: EngineInput, signal: AbortSignal): AsyncGenerator<EngineChunk> {
    const chars = [...input.text];
    const total = Math.round((chars.length * this.options.secondsPerChar * this.sampleRate) / input.speed);
    const chunkLength = Math.max(1, Math.round(this.options.chunkSeconds * this.sampleRate));
    const step = (2 * Math.PI * frequencyFor(input.voice.id)) / this.sampleRate;
    const perChar = total / Math.max(chars.length, 1);
    let word = '';
    let wordStart = 0;
    let charIndex = 0;
    for (let offset = 0; offset < total; offset += chunkLength) {
      signal.throwIfAborted();
      const samples = new Float32Array(Math.min(chunkLength, total - offset));
      for (let i = 0; i < samples.length; i++) samples[i] = 0.5 * Math.sin(step * (offset + i));
      const chunk: EngineChunk = { samples };
      if (input.wordTimings) {
        // Words are the whitespace-separated runs of characters spoken in this chunk.
        const words = [];
        const endChar = Math.min(chars.length, Math.floor((offset + samples.length) / perChar));
        for (; charIndex < endChar; charIndex++) {
          const ch = chars[charIndex];
          if (/\s/u.test(ch)) {
            if (word) words.push({ word, start: wordStart, end: (charIndex * perChar) / this.sampleRate });
            word = '';
          } else {
            if (!word) wordStart = (charIndex * perChar) / this.sampleRate;
            word += ch;
          }
        }
        if (offset + samples.length >= total && word) words.push({ word, start: wordStart, end: total / this.sampleRate });
        if (words.length) chunk.words = words;
      }
      yield chunk;
    }
  }
}
