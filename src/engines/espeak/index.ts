/**
 * @module engines/espeak
 * Registers the `espeak` engine type: eSpeak NG in a pool of worker threads.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { defineEngine } from '../registration.js';
import { POOL_DEFAULTS } from '../worker-pool/pool.js';
import { EspeakPool, WARM_UP_JOBS } from './pool.js';

export const espeakEngine = defineEngine({
  type: 'espeak',
  normalize: true,
  env: {
    VOICEGATE_ESPEAK_WORKERS: ['workers', 'number'],
    VOICEGATE_ESPEAK_QUEUE_LIMIT: ['queueLimit', 'number'],
    VOICEGATE_ESPEAK_SPLIT_FIRST_SENTENCE: ['splitFirstSentence', 'boolean'],
    VOICEGATE_ESPEAK_WARM_UP_JOBS: ['warmUpJobs', 'number'],
  },
  configSchema: z
    .object({
      type: z.literal('espeak'),
      workers: z.number().int().min(1).max(64).default(Math.max(1, availableParallelism())),
      queueLimit: z.number().int().min(0).default(256),
      highWater: z.number().int().min(2).default(32),
      /** Longest a request may wait for a worker (503 `engine_unavailable` beyond). */
      queueTimeoutMs: z.number().int().min(100).default(POOL_DEFAULTS.queueTimeoutMs),
      /** Longest a synthesis may run, not counting pauses for a slow reader (504 `engine_timeout` beyond). */
      jobTimeoutMs: z.number().int().min(1000).default(POOL_DEFAULTS.jobTimeoutMs),
      /** While every worker is busy, speak a first sentence's head as a job of its own (sooner first audio, a phrase break). */
      splitFirstSentence: z.boolean().default(true),
      /** Jobs each worker speaks before `/readyz` says ready, so the first callers meet optimised code (0 = ready at once, cold). */
      warmUpJobs: z.number().int().min(0).max(1000).default(WARM_UP_JOBS),
    })
    .strict(),
  create: (id, { type: _type, ...config }, { logger }) => new EspeakPool({ id, ...config, logger }),
});
