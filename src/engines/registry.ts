/**
 * @module engines/registry
 * Creates the configured engines through their registrations
 * (`engine-types.ts`). Only engines some model is bound to are started, so an
 * unused engine costs nothing at start-up.
 */
import type { Voice } from '../voices/voice.js';
import type { Engine } from './engine.js';
import { ENGINE_TYPES, type EngineConfig } from './engine-types.js';
import type { EngineContext, EngineRegistration } from './registration.js';

const BY_TYPE = new Map<string, EngineRegistration>(ENGINE_TYPES.map((registration) => [registration.type, registration as unknown as EngineRegistration]));

export function createEngine(id: string, config: EngineConfig, context: EngineContext): Engine {
  const registration = BY_TYPE.get(config.type);
  if (!registration) throw new Error(`engine ${id}: unknown engine type ${config.type}`);
  return registration.create(id, config as never, context);
}

export class EngineRegistry {
  private readonly engines = new Map<string, Engine>();

  constructor(configs: Record<string, EngineConfig>, bound: Set<string>, context: EngineContext) {
    for (const id of bound) {
      const config = configs[id];
      if (config) this.engines.set(id, createEngine(id, config, context));
    }
  }

  get(id: string): Engine | undefined {
    return this.engines.get(id);
  }

  list(): Engine[] {
    return [...this.engines.values()];
  }

  async start(): Promise<void> {
    await Promise.all(this.list().map((engine) => engine.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.list().map((engine) => engine.stop()));
  }

  allReady(): boolean {
    return this.list().every((engine) => engine.isReady());
  }

  /** The voices the started engines bring as built-ins (see `Engine.builtinVoices`). */
  builtinVoices(): Voice[] {
    return this.list().flatMap((engine) => engine.builtinVoices?.() ?? []);
  }
}
