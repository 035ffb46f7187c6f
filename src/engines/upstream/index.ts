/**
 * @module engines/upstream
 * Registers the remote engine types, one per dialect the servers speak:
 * `openai-upstream`, `cartesia-upstream`, `elevenlabs-upstream` and
 * `deepgram-upstream`. All share the pool settings; a server's key may be
 * read from the environment (`apiKeyEnv`) so config files hold no secrets.
 */
import { z } from 'zod';
import { defineEngine } from '../registration.js';
import { CartesiaUpstreamEngine } from './cartesia-engine.js';
import { DEEPGRAM_PCM_RATES, DeepgramUpstreamEngine, deepgramAuth } from './deepgram-engine.js';
import { ELEVENLABS_PCM_RATES, ElevenLabsUpstreamEngine, elevenLabsAuth } from './elevenlabs-engine.js';
import { OpenAIUpstreamEngine } from './openai-engine.js';
import type { UpstreamConfig } from './pool.js';

const upstreamSchema = z
  .object({
    /** Base URL, e.g. http://gpu-1:8880 (the engine appends /v1/audio/speech or /tts/sse). */
    url: z.url(),
    /** Sent as `Authorization: Bearer`; never logged. */
    apiKey: z.string().min(1).optional(),
    /** The environment variable that holds the key (instead of `apiKey`); it must be set when the server starts. */
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
    /** Requests this server may run at once; more wait for another server. */
    maxConcurrent: z.number().int().min(1).default(8),
  })
  .strict()
  .refine((u) => !(u.apiKey && u.apiKeyEnv), { message: 'set apiKey or apiKeyEnv, not both' });

/** The servers with their keys: `apiKeyEnv` read now (the variable's name in the error, never a value). */
function withKeys(id: string, upstreams: (UpstreamConfig & { apiKeyEnv?: string })[]): UpstreamConfig[] {
  return upstreams.map(({ apiKeyEnv, ...upstream }) => {
    if (!apiKeyEnv) return upstream;
    const apiKey = process.env[apiKeyEnv];
    if (!apiKey) throw new Error(`engines.${id}: the environment variable ${apiKeyEnv} (apiKeyEnv) is not set`);
    return { ...upstream, apiKey };
  });
}

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
  create: (id, { type: _type, format, upstreams, ...config }, { logger }) => new OpenAIUpstreamEngine({ ...config, upstreams: withKeys(id, upstreams), id, logger }, format),
});

export const cartesiaUpstreamEngine = defineEngine({
  type: 'cartesia-upstream',
  configSchema: upstreamEngineSchema('cartesia-upstream', z.enum(['pcm_s16le', 'pcm_f32le']).default('pcm_f32le')),
  create: (id, { type: _type, format, upstreams, ...config }, { logger }) => new CartesiaUpstreamEngine({ ...config, upstreams: withKeys(id, upstreams), id, logger }, format),
});

/** A rate one of `rates`, default 24,000 (both hosted services' raw PCM rates). */
const pcmRate = (rates: readonly number[]) =>
  z
    .number()
    .int()
    .refine((rate) => rates.includes(rate), { message: `one of ${rates.join(', ')}` })
    .default(24000);

export const elevenLabsUpstreamEngine = defineEngine({
  type: 'elevenlabs-upstream',
  configSchema: upstreamEngineSchema('elevenlabs-upstream', z.never().optional()).omit({ format: true }).extend({
    /** The ElevenLabs model id, e.g. `eleven_flash_v2_5`. */
    model: z.string().min(1),
    /** Asked for as `output_format=pcm_<rate>`. */
    sampleRate: pcmRate(ELEVENLABS_PCM_RATES),
    /** Costs nothing on ElevenLabs (with the key). */
    healthPath: z.string().startsWith('/').default('/v1/models'),
  }),
  create: (id, { type: _type, upstreams, ...config }, { logger }) =>
    new ElevenLabsUpstreamEngine({ ...config, upstreams: withKeys(id, upstreams), id, logger, auth: elevenLabsAuth }),
});

export const deepgramUpstreamEngine = defineEngine({
  type: 'deepgram-upstream',
  configSchema: upstreamEngineSchema('deepgram-upstream', z.never().optional()).omit({ format: true }).extend({
    /** A label for the model family (errors name it); each voice's Aura model name is in `voices`. */
    model: z.string().min(1).default('aura-2'),
    /** Asked for as `sample_rate=<rate>` with `encoding=linear16&container=none`. */
    sampleRate: pcmRate(DEEPGRAM_PCM_RATES),
    healthPath: z.string().startsWith('/').default('/v1/models'),
  }),
  create: (id, { type: _type, upstreams, ...config }, { logger }) =>
    new DeepgramUpstreamEngine({ ...config, upstreams: withKeys(id, upstreams), id, logger, auth: deepgramAuth }),
});
