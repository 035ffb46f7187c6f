/**
 * @module engines/sherpa/worker
 * The worker-thread script of the sherpa-onnx engine's pool: the model
 * worker (`model-worker.ts`) with the real sherpa-onnx binding.
 */
import sherpa from 'sherpa-onnx-node';
import { serveModel } from './model-worker.js';

serveModel((config) => new sherpa.OfflineTts(config));
