/**
 * @module engines/sherpa
 * Registers the `sherpa-onnx` engine type: a local neural model (Piper/VITS,
 * Kokoro, Kitten, Matcha, ZipVoice, Pocket) in a pool of worker threads.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineEngine } from '../registration.js';
import { POOL_DEFAULTS } from '../worker-pool/pool.js';
import { SherpaEngine } from './engine.js';
import { FAMILIES, FILE_ROLES } from './layout.js';

export const sherpaEngine = defineEngine({
  type: 'sherpa-onnx',
  normalize: true,
  configSchema: z
    .object({
      type: z.literal('sherpa-onnx'),
      /** The folder of an unpacked sherpa-onnx model archive. */
      model: z.string().min(1),
      /** Detected from the folder when absent. */
      family: z.enum(FAMILIES).optional(),
      /** Files by sherpa-onnx's config names, relative to `model`; detected when absent. */
      files: z.partialRecord(z.enum(FILE_ROLES), z.string().min(1)).optional(),
      /** Kokoro's language for multi-lingual models (`en-us`, `zh`, …). */
      lang: z.string().min(1).optional(),
      /** onnxruntime threads per worker. */
      numThreads: z.number().int().min(1).max(64).default(1),
      /** Worker threads, each holding the model and speaking one request at a time. */
      workers: z.number().int().min(1).max(64).default(Math.max(1, Math.min(4, availableParallelism()))),
      queueLimit: z.number().int().min(0).default(64),
      /** Half-second pieces a worker may run ahead of a slow reader before it pauses. */
      highWater: z.number().int().min(2).default(8),
      queueTimeoutMs: z.number().int().min(100).default(POOL_DEFAULTS.queueTimeoutMs),
      jobTimeoutMs: z.number().int().min(1000).default(POOL_DEFAULTS.jobTimeoutMs),
      /** Voice id → speaker id of a multi-speaker model. */
      voices: z.record(z.string(), z.number().int().min(0)).default({}),
      /**
       * Mixes a Kokoro model holds at once (rows of its style table, 522,240 bytes each in every
       * worker); a new mix reloads the workers once. 0: the model does not mix (400 `voice_mix_unsupported`).
       */
      mixSlots: z.number().int().min(0).max(256).default(16),
      /** Speaker for voices with no mapping; without it they get 409 `voice_profile_missing`. */
      defaultSpeaker: z.number().int().min(0).optional(),
      /** Longest the load probe may take at start. */
      probeTimeoutMs: z.number().int().min(1000).default(120_000),
      /** Flow-matching steps of a cloning model (ZipVoice, Pocket); sherpa-onnx's default when absent. */
      numSteps: z.number().int().min(1).max(64).optional(),
      /**
       * Longest text one generate call is given: a longer sentence is cut at clause punctuation (a
       * comma, semicolon, colon or dash), and kept whole when it has none (up to 400 characters).
       * Each worker keeps the memory of the longest call it made, ≈ 20 MiB per second of audio.
       */
      maxSentenceChars: z.number().int().min(20).max(400).default(150),
      /**
       * A request's first sentence as a short head and the rest, so first audio waits for a few
       * words: cut at clause punctuation always, between words while every worker is busy.
       */
      splitFirstSentence: z.boolean().default(true),
      /**
       * After this long with no request, the workers exit and the model's memory returns to the
       * system; the next request loads it again (its first audio waits for the load). Absent: the
       * model stays loaded for the life of the server.
       */
      idleUnloadSeconds: z.number().int().min(1).max(86_400).optional(),
    })
    .strict(),
  create: (id, { type: _type, ...config }, { logger, dataDir }) =>
    new SherpaEngine({
      id,
      ...config,
      espeakDataDir: dataDir ? join(dataDir, 'espeak-ng-data') : undefined,
      sessionOptionsPath: dataDir ? join(dataDir, 'sherpa-onnx-session.conf') : undefined,
      mixDir: dataDir ? join(dataDir, 'sherpa-mix', id) : undefined,
      logger,
    }),
});
