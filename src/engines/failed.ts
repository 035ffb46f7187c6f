/**
 * @module engines/failed
 * What the registry keeps in place of an engine that could not start (a bad
 * model file, a missing folder): it reports itself not ready with the reason
 * in `/readyz` and `GET /models`, and answers its requests with 503
 * `engine_unavailable`, so one broken engine never stops the server or the
 * models bound to other engines.
 */
import { ApiError } from '../errors/api-error.js';
import type { Voice } from '../voices/voice.js';
import type { Engine, EngineChunk, EngineInfo } from './engine.js';

export class FailedEngine implements Engine {
  readonly id: string;
  readonly type: string;
  readonly sampleRate: number;

  constructor(
    engine: Engine,
    /** Why it could not start, as the operator should read it. */
    readonly reason: string,
  ) {
    this.id = engine.id;
    this.type = engine.type;
    this.sampleRate = engine.sampleRate;
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  isReady(): boolean {
    return false;
  }

  /** Every voice, so its requests learn that the engine is down rather than that a voice lacks a profile. */
  supportsVoice(_voice: Voice): boolean {
    return true;
  }

  // eslint-disable-next-line require-yield
  async *synthesize(): AsyncIterable<EngineChunk> {
    throw new ApiError('engine_unavailable', {}, { 'retry-after': '30' });
  }

  info(): EngineInfo {
    return { id: this.id, type: this.type, sampleRate: this.sampleRate, ready: false, failed: true, error: this.reason };
  }
}
