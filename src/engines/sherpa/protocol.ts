/**
 * @module engines/sherpa/protocol
 * What the sherpa-onnx engine sends its worker threads through the pool and
 * what they report back. The envelope and control block are the pool's
 * (`engines/worker-pool/protocol`).
 */
import type { OfflineTtsConfig } from 'sherpa-onnx-node';

/** `workerData.engine` of every worker: the model's sherpa-onnx config. */
export interface SherpaWorkerData {
  config: OfflineTtsConfig;
}

export interface SherpaJob {
  text: string;
  /** Speaker id. */
  sid: number;
  speed: number;
}

export interface SherpaReady {
  sampleRate: number;
  numSpeakers: number;
}
