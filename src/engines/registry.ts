/**
 * @module engines/registry
 * Creates the configured engines. Only engines some model is bound to are
 * started, so an unused engine costs nothing at start-up.
 */
import type { EngineConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Engine } from './engine.js';
import { EspeakPool } from './espeak/pool.js';
import { ToneEngine } from './tone/engine.js';
import { CartesiaUpstreamEngine } from './upstream/cartesia-engine.js';
import { OpenAIUpstreamEngine } from './upstream/openai-engine.js';

export function createEngine(id: string, config: EngineConfig, logger: Logger): Engine {
  switch (config.type) {
    case 'espeak':
      return new EspeakPool({ id, workers: config.workers, queueLimit: config.queueLimit, highWater: config.highWater, logger });
    case 'tone':
      return new ToneEngine({ id, sampleRate: config.sampleRate, secondsPerChar: config.secondsPerChar, chunkSeconds: config.chunkSeconds });
    case 'openai-upstream':
    case 'cartesia-upstream': {
      const { type: _type, format, ...rest } = config;
      const options = { ...rest, id, logger };
      return config.type === 'openai-upstream'
        ? new OpenAIUpstreamEngine(options, config.format)
        : new CartesiaUpstreamEngine(options, config.format);
    }
  }
}

export class EngineRegistry {
  private readonly engines = new Map<string, Engine>();

  constructor(configs: Record<string, EngineConfig>, bound: Set<string>, logger: Logger) {
    for (const id of bound) {
      const config = configs[id];
      if (config) this.engines.set(id, createEngine(id, config, logger));
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
}
