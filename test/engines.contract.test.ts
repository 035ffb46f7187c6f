/**
 * @module test/engines.contract
 * Runs the shared engine contract against every engine that ships, and the
 * worker contract against the eSpeak pool on a single worker.
 */
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { ToneEngine } from '../src/engines/tone/engine.js';
import { createLogger } from '../src/log/logger.js';
import { engineContract, workerContract } from './helpers/engine-contract.js';

const espeak = (workers: number, limits = {}) =>
  new EspeakPool({ id: 'espeak', workers, queueLimit: 16, highWater: 32, logger: createLogger('silent'), ...limits });

engineContract('espeak', () => espeak(2), { speaksText: true, wordTimings: true, deterministic: false, int16: true, staged: true });
workerContract('espeak', (limits) => espeak(1, limits));
engineContract('tone', () => new ToneEngine({ id: 'tone', sampleRate: 24000, secondsPerChar: 0.06, chunkSeconds: 0.1 }), {
  speaksText: false,
  wordTimings: true,
  deterministic: true,
  int16: true,
});
