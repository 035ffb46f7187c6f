/**
 * @module test/sherpa.contract
 * The shared engine contract and the worker contract against the sherpa-onnx
 * engine, on a stand-in Piper model the test writes itself
 * (`helpers/sherpa-model.ts`): real loading, phonemizing, sentence callbacks
 * and cancellation, with a tone per phoneme instead of a voice.
 */
import { after } from 'node:test';
import { SherpaEngine } from '../src/engines/sherpa/engine.js';
import { createLogger } from '../src/log/logger.js';
import { engineContract, workerContract } from './helpers/engine-contract.js';
import { removeRunDir, runDir, standInModel } from './helpers/sherpa-model.js';
import { join } from 'node:path';

const model = standInModel();
const sherpa = (workers: number, limits = {}) =>
  new SherpaEngine({
    id: 'piper',
    model,
    numThreads: 1,
    workers,
    queueLimit: 16,
    highWater: 4,
    voices: {},
    espeakDataDir: join(runDir(), 'espeak-ng-data'),
    logger: createLogger('silent'),
    ...limits,
  });

after(() => removeRunDir());

engineContract('sherpa-onnx', () => sherpa(2), { speaksText: true, wordTimings: false, deterministic: true, staged: true });
workerContract('sherpa-onnx', (limits) => sherpa(1, limits));
