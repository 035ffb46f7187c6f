/**
 * @module engines/espeak/protocol
 * Messages between the eSpeak pool (main thread) and its worker threads, and
 * the layout of the small shared control block each worker reads while it
 * speaks: eSpeak blocks its thread, so cancellation and backpressure cannot
 * wait for a message — the worker polls these slots from its audio callback.
 */
import type { EspeakListedVoice } from '../../voices/builtin.js';

/** Int32 slots of the shared control block. */
export const CONTROL = {
  /** Set to 1 by the pool to cancel the current job. */
  cancel: 0,
  /** eSpeak chunks (~100 ms each) posted by the worker and not yet taken by the consumer. */
  inFlight: 1,
} as const;
export const CONTROL_SLOTS = 2;

export interface SynthesizeMessage {
  type: 'synthesize';
  jobId: number;
  text: string;
  voice: string;
  pitch: number;
  rate: number;
  /** eSpeak chunks the worker may post ahead of the consumer before it waits. */
  highWater: number;
}

/** Word event as eSpeak reports it: 1-based code-point position, length, audio offset in ms. */
export interface RawWordEvent {
  position: number;
  length: number;
  ms: number;
}

export type WorkerMessage =
  | { type: 'ready'; sampleRate: number; voices: EspeakListedVoice[] }
  /** `units`: eSpeak callbacks (~100 ms each) gathered in this message, as counted in `CONTROL.inFlight`. */
  | { type: 'chunk'; jobId: number; pcm: Int16Array; words: RawWordEvent[]; units: number }
  | { type: 'end'; jobId: number; cancelled: boolean }
  | { type: 'failed'; jobId: number; message: string };
