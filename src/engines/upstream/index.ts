/**
 * @module engines/upstream
 * Registers the remote engine types, one per dialect the servers speak:
 * `openai-upstream` and `cartesia-upstream`. Both share the pool settings.
 */
import { z } from 'zod';
import { defineEngine } from '../registration.js';
import { CartesiaUpstreamEngine } from './cartesia-engine.js';
import { OpenAIUpstreamEngine } from './openai-engine.js';

const upstreamSchema = z
  .object({
    /** Base URL, e.g. http://gpu-1:8880 (the engine appends /v1/audio/speech or /tts/sse). */
    url: z.url(),
    /** Sent as `Authorization: Bearer`; never logged. */
    apiKey: z.string().min(1).optional(),
    /** Requests this server may run at once; more wait for another server. */
    maxConcurrent: z.number().int().min(1).default(8),
  })
  .strict();

/** A pool of remote inference servers that speak one dialect. */
function upstreamEngineSchema<T extends string, F extends z.ZodType>(type: T, format: F) {
  return z
    .object({
      type: z.literal(type),
      upstreams: z.array(upstreamSchema).min(1),
      /** The model name the servers expect. */
      model: z.string().min(1),
      /** The rate the servers produce (their native rate). */
      sampleRate: z.number().int().min(8000).max(48000),
      /** What to ask the servers for: raw PCM streams best. */
      format,
      /** Our voice id → the servers' voice name; voices not listed are refused unless `passVoiceIds`. */
      voices: z.record(z.string(), z.string()).default({}),
      /** Send any voice id unchanged (for servers that know our ids, or clone by id). */
      passVoiceIds: z.boolean().default(false),
      /** Longest a generation may take (504 `upstream_timeout` beyond). */
      timeoutMs: z.number().int().min(1000).default(300_000),
      /** Health probe: GET this path on each server. */
      healthPath: z.string().startsWith('/').default('/health'),
      probeIntervalMs: z.number().int().min(100).default(5000),
      /** Consecutive failures that take a server out of rotation until a probe passes. */
      ejectAfterFailures: z.number().int().min(1).default(3),
    })
    .strict();
}

export const openaiUpstreamEngine = defineEngine({
  type: 'openai-upstream',
  configSchema: upstreamEngineSchema('openai-upstream', z.enum(['pcm', 'wav']).default('pcm')),
  create: (id, { type: _type, format, ...config }, { logger }) => new OpenAIUpstreamEngine({ ...config, id, logger }, format),
});

export const cartesiaUpstreamEngine = defineEngine({
  type: 'cartesia-upstream',
  configSchema: upstreamEngineSchema('cartesia-upstream', z.enum(['pcm_s16le', 'pcm_f32le']).default('pcm_f32le')),
  create: (id, { type: _type, format, ...config }, { logger }) => new CartesiaUpstreamEngine({ ...config, id, logger }, format),
});
