/**
 * @module test/engines.contract
 * Runs the shared engine contract against every engine that ships.
 */
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { ToneEngine } from '../src/engines/tone/engine.js';
import { createLogger } from '../src/log/logger.js';
import { engineContract } from './helpers/engine-contract.js';

engineContract(
  'espeak',
  () => new EspeakPool({ id: 'espeak', workers: 2, queueLimit: 16, highWater: 32, logger: createLogger('silent') }),
  { speaksText: true, wordTimings: true },
);
engineContract('tone', () => new ToneEngine({ id: 'tone', sampleRate: 24000, secondsPerChar: 0.06, chunkSeconds: 0.1 }), { speaksText: false, wordTimings: true });
