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
import { cartesiaUpstreamEngine, openaiUpstreamEngine } from './upstream/index.js';

export const ENGINE_TYPES = [
  espeakEngine,
  toneEngine,
  openaiUpstreamEngine,
  cartesiaUpstreamEngine,
  sherpaEngine,
] as const;

type ConfigSchemas<T extends readonly { configSchema: unknown }[]> = { -readonly [K in keyof T]: T[K]['configSchema'] };

/** One configured engine: the entry of whichever type it names. */
export const engineConfigSchema = z.discriminatedUnion(
  'type',
  ENGINE_TYPES.map((registration) => registration.configSchema) as ConfigSchemas<typeof ENGINE_TYPES>,
);

export type EngineConfig = z.output<typeof engineConfigSchema>;
