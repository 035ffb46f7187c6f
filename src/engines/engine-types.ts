/**
 * @module engines/engine-types
 * The engine types this server knows, one line each. The config schema's
 * `engines.<id>` union and the factory (`registry.ts`) are both built from
 * this list, so a new engine type is its folder plus one line here.
 */
import { z } from 'zod';
import { espeakEngine } from './espeak/index.js';
import { sherpaEngine } from './sherpa/index.js';
import { toneEngine } from './tone/index.js';
import { cartesiaUpstreamEngine, deepgramUpstreamEngine, elevenLabsUpstreamEngine, openaiUpstreamEngine } from './upstream/index.js';

export const ENGINE_TYPES = [
  espeakEngine,
  toneEngine,
  openaiUpstreamEngine,
  cartesiaUpstreamEngine,
  elevenLabsUpstreamEngine,
  deepgramUpstreamEngine,
  sherpaEngine,
] as const;

/** Each type's entry schema with the settings every entry takes. */
type ConfigSchemas<T extends readonly { configSchema: z.ZodObject }[]> = {
  -readonly [K in keyof T]: z.ZodObject<T[K]['configSchema']['shape'] & typeof COMMON_ENGINE_SETTINGS, z.core.$strict>;
};

/**
 * Settings every engine entry takes, whatever its type: `normalize` rewrites numbers, dates, money
 * and the like as words before the engine speaks (synthesis/normalize); absent, the type's default
 * (`EngineRegistration.normalize`).
 */
export const COMMON_ENGINE_SETTINGS = {
  normalize: z.boolean().optional(),
  /**
   * A model with a fallback chain moves on when this engine has made no audio this long
   * (synthesis/fallback); a model's own `firstAudioTimeoutMs` overrides it.
   */
  firstAudioTimeoutMs: z.number().int().min(10).default(5000),
  /** A circuit breaker for this engine (engines/breaker): absent, none. */
  breaker: z
    .object({ failures: z.number().int().min(1).default(5), openMs: z.number().int().min(10).default(30_000) })
    .strict()
    .optional(),
};

/** One configured engine: the entry of whichever type it names. */
export const engineConfigSchema = z.discriminatedUnion(
  'type',
  ENGINE_TYPES.map((registration) => registration.configSchema.extend(COMMON_ENGINE_SETTINGS)) as unknown as ConfigSchemas<typeof ENGINE_TYPES>,
);

export type EngineConfig = z.output<typeof engineConfigSchema>;
