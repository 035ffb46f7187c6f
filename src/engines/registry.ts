/**
 * @module engines/registry
 * Creates the configured engines through their registrations
 * (`engine-types.ts`). Only engines some model is bound to are started, so an
 * unused engine costs nothing at start-up. An engine that fails to start is
 * replaced by a `FailedEngine` that reports why, so the others keep serving.
 */
import { createHash } from 'node:crypto';
import type { Voice } from '../voices/voice.js';
import type { Engine } from './engine.js';
import { FailedEngine } from './failed.js';
import { ENGINE_TYPES, type EngineConfig } from './engine-types.js';
import { CircuitBreaker } from './breaker.js';
import type { EngineContext, EngineRegistration } from './registration.js';

const BY_TYPE = new Map<string, EngineRegistration>(ENGINE_TYPES.map((registration) => [registration.type, registration as unknown as EngineRegistration]));

export function createEngine(id: string, config: EngineConfig, context: EngineContext): Engine {
  const registration = BY_TYPE.get(config.type);
  if (!registration) throw new Error(`engine ${id}: unknown engine type ${config.type}`);
  // The settings every type takes are the registry's, not the engine's.
  const { normalize: _normalize, ...own } = config;
  return registration.create(id, own as never, context);
}

/** Whether the entry's text is normalised before it is spoken: its `normalize`, else its type's default. */
export function normalizes(config: EngineConfig): boolean {
  return config.normalize ?? BY_TYPE.get(config.type)?.normalize ?? false;
}

export class EngineRegistry {
  private readonly engines = new Map<string, Engine>();
  private readonly fingerprints = new Map<string, string>();
  private readonly breakerMap = new Map<string, CircuitBreaker>();
  /** Engines added after start (imported models), beside the configured ones. */
  private readonly added = new Map<string, EngineConfig>();

  constructor(
    private readonly configs: Record<string, EngineConfig>,
    bound: Set<string>,
    private readonly context: EngineContext,
    /** Instances that stand in for configured engines of the same id. */
    instances: Record<string, Engine> = {},
  ) {
    for (const id of bound) {
      const config = configs[id];
      if (config) this.engines.set(id, instances[id] ?? createEngine(id, config, context));
      if (config?.breaker) this.breakerMap.set(id, new CircuitBreaker(id, config.breaker));
    }
  }

  get(id: string): Engine | undefined {
    return this.engines.get(id);
  }

  /** The engine's circuit breaker (`engines.<id>.breaker`); undefined: it has none. */
  breaker(id: string): CircuitBreaker | undefined {
    return this.breakerMap.get(id);
  }

  /** Every engine's breaker, for the metrics. */
  breakers(): CircuitBreaker[] {
    return [...this.breakerMap.values()];
  }

  /** How long a model with a fallback chain waits for this engine's first audio (`firstAudioTimeoutMs`). */
  firstAudioTimeoutMs(id: string): number {
    return this.configOf(id)?.firstAudioTimeoutMs ?? 5000;
  }

  /** Whether text for engine `id` is normalised before it is spoken (`normalize`, else its type's default). */
  normalizes(id: string): boolean {
    const config = this.configOf(id);
    return config ? normalizes(config) : false;
  }

  /** Engine `id`'s entry: the configuration's, or the one it was added with. */
  configOf(id: string): EngineConfig | undefined {
    return this.added.get(id) ?? this.configs[id];
  }

  /** Whether engine `id` was added after start (`add`), and so may be removed. */
  isAdded(id: string): boolean {
    return this.added.has(id);
  }

  /**
   * Creates and starts engine `id` while the server runs (an imported model). One that cannot start
   * is stopped and the error thrown, leaving nothing registered.
   */
  async add(id: string, config: EngineConfig): Promise<Engine> {
    if (this.engines.has(id) || this.configs[id]) throw new Error(`engine ${id} exists`);
    const engine = createEngine(id, config, this.context);
    try {
      await engine.start();
    } catch (err) {
      await engine.stop().catch(() => {});
      throw err;
    }
    this.engines.set(id, engine);
    this.added.set(id, config);
    return engine;
  }

  /** Removes an engine `add` added: its calls under way end first (`Engine.stop`). */
  async remove(id: string): Promise<void> {
    const engine = this.engines.get(id);
    if (!engine || !this.added.has(id)) return;
    this.engines.delete(id);
    this.added.delete(id);
    this.fingerprints.delete(id);
    await engine.stop();
  }

  list(): Engine[] {
    return [...this.engines.values()];
  }

  /** Starts every engine; one that fails is stopped, logged and kept as a `FailedEngine`. Never rejects. */
  async start(): Promise<void> {
    await Promise.all(
      this.list().map(async (engine) => {
        try {
          await engine.start();
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          this.context.logger.error({ engine: engine.id, type: engine.type, reason }, 'engine could not start; its models answer engine_unavailable');
          await engine.stop().catch(() => {});
          this.engines.set(engine.id, new FailedEngine(engine, reason));
        }
      }),
    );
  }

  /**
   * What decides the audio of engine `id`, as a SHA-256 (hex): its type, its whole configuration
   * entry (a setting that does not change audio changes it too, which only costs cache hits) and
   * what the engine reports of itself (`Engine.fingerprint`). Made once, after start.
   */
  fingerprint(id: string): string | null {
    const known = this.fingerprints.get(id);
    if (known) return known;
    const engine = this.engines.get(id);
    if (!engine || engine instanceof FailedEngine) return null;
    const made = createHash('sha256')
      .update(JSON.stringify({ type: engine.type, config: this.configOf(id) ?? null, own: engine.fingerprint?.() ?? null }))
      .digest('hex');
    if (engine.isReady()) this.fingerprints.set(id, made);
    return made;
  }

  /** Engines that could not start, with the reason. */
  failures(): { id: string; type: string; reason: string }[] {
    return this.list().flatMap((e) => (e instanceof FailedEngine ? [{ id: e.id, type: e.type, reason: e.reason }] : []));
  }

  async stop(): Promise<void> {
    await Promise.all(this.list().map((engine) => engine.stop()));
  }

  /**
   * Whether every engine that started is ready and at least one did. Engines that failed to start
   * do not make the server unready (the other models still work): `/readyz` lists them instead.
   */
  allReady(): boolean {
    const started = this.list().filter((engine) => !(engine instanceof FailedEngine));
    return started.length > 0 && started.every((engine) => engine.isReady());
  }

  /** The voices the started engines bring as built-ins (see `Engine.builtinVoices`). */
  builtinVoices(): Voice[] {
    return this.list().flatMap((engine) => engine.builtinVoices?.() ?? []);
  }
}
