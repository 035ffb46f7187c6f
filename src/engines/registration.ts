/**
 * @module engines/registration
 * How an engine type plugs in: its `type` (the `engines.<id>.type` value in
 * config), a zod schema for its config entry, and a factory. Each engine
 * folder exports its registration from `index.ts`; `engine-types.ts` lists
 * them, and from that one list come both the config schema and the factory,
 * so adding an engine type touches its folder and one line there.
 */
import type { z } from 'zod';
import type { Logger } from '../log/logger.js';
import type { Engine } from './engine.js';

/** What the server gives every engine it creates. */
export interface EngineContext {
  logger: Logger;
  /** The server's data folder, for engines that keep files (unpacked data, caches). */
  dataDir?: string;
}

/** A config entry's schema: a strict object whose `type` is the engine type's literal. */
export type EngineConfigSchema<T extends string> = z.ZodObject<{ type: z.ZodLiteral<T> } & z.ZodRawShape, z.core.$strict>;

export interface EngineRegistration<T extends string = string, S extends EngineConfigSchema<T> = EngineConfigSchema<T>> {
  type: T;
  configSchema: S;
  /**
   * Whether text is normalised (numbers, dates, money… as words) before this type speaks it, unless
   * an entry's `normalize` says otherwise: on for engines that speak here, off for remote servers,
   * which normalise themselves, and for test signals. Absent: off.
   */
  normalize?: boolean;
  /**
   * Environment variables that set fields of the default entry of this type (`engines.<type>`):
   * variable → [field, kind]. The config's environment table takes them (config/schema.ts).
   */
  env?: Record<string, [setting: string, kind: 'number' | 'string' | 'boolean' | 'list']>;
  create(id: string, config: z.output<S>, context: EngineContext): Engine;
}

/** Declares a registration, checking that the schema's `type` literal is the registration's. */
export function defineEngine<T extends string, S extends EngineConfigSchema<T>>(registration: EngineRegistration<T, S>): EngineRegistration<T, S> {
  return registration;
}
