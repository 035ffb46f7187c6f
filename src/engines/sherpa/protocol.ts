/**
 * @module engines/sherpa/protocol
 * What the sherpa-onnx engine sends its worker threads through the pool and
 * what they report back. The envelope and control block are the pool's
 * (`engines/worker-pool/protocol`).
 */
import type { OfflineTtsConfig } from 'sherpa-onnx-node';
import type { SessionOptionsFile } from './session-options.js';

/** `workerData.engine` of every worker: the model's sherpa-onnx config. */
export interface SherpaWorkerData {
  config: OfflineTtsConfig;
  /** The onnxruntime options file the config's provider names: written again before the model loads. */
  sessionOptions?: SessionOptionsFile;
  /** Flow-matching steps of a cloning model (ZipVoice, Pocket); sherpa-onnx's default when absent. */
  numSteps?: number;
  /** Longest text one generate call is given where clause punctuation allows (engines/sentences). */
  maxSentenceChars?: number;
}

/** What a cloning model speaks in the voice of. */
export interface SherpaReference {
  /** Mono samples in shared memory: posting the job shares them with the worker, nothing is copied. */
  audio: Float32Array;
  sampleRate: number;
  /** What the clip says. */
  text?: string;
}

export interface SherpaJob {
  text: string;
  /** Speaker id. */
  sid: number;
  speed: number;
  /** A multi-lingual Kokoro model's language for this text (eSpeak NG's name: `en-us`, `fr`, `cmn`, …). */
  lang?: string;
  /** A cloning model's reference clip (absent for the other families). */
  reference?: SherpaReference;
}

export interface SherpaReady {
  sampleRate: number;
  numSpeakers: number;
}
