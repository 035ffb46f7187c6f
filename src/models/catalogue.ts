/**
 * @module models/catalogue
 * The model ids this server answers to: the shipped profiles with the
 * config's overrides applied, plus models the config defines by extending
 * one. Each is checked against the configured engines at start-up.
 */
import type { ModelConfig } from '../config/schema.js';
import { BUILTIN_MODELS } from './builtin.js';
import type { ModelProfile } from './profile.js';

export class ModelCatalogue {
  private readonly models = new Map<string, ModelProfile>();

  constructor(profiles: Iterable<ModelProfile>) {
    for (const profile of profiles) this.models.set(profile.id, profile);
  }

  get(id: string): ModelProfile | undefined {
    return this.models.get(id);
  }

  list(): ModelProfile[] {
    return [...this.models.values()];
  }

  /** The engine ids some model is bound to. */
  boundEngines(): Set<string> {
    return new Set(this.list().map((m) => m.engine));
  }
}

function merge(base: ModelProfile, id: string, override: ModelConfig): ModelProfile {
  const { extends: _extends, clip, stream, ...rest } = override;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  return {
    ...base,
    ...defined,
    id,
    clip: { ...base.clip, ...clip },
    stream: { ...base.stream, ...stream },
  } as ModelProfile;
}

export function buildModelCatalogue(configured: Record<string, ModelConfig>, engineIds: Set<string>): ModelCatalogue {
  const profiles = new Map<string, ModelProfile>(Object.entries(BUILTIN_MODELS));
  for (const [id, override] of Object.entries(configured)) {
    const baseId = override.extends ?? id;
    const base = profiles.get(baseId) ?? BUILTIN_MODELS[baseId];
    if (!base) throw new Error(`model ${id}: unknown model to extend (${baseId}); known: ${[...profiles.keys()].join(', ')}`);
    profiles.set(id, merge(base, id, override));
  }
  for (const profile of profiles.values()) {
    if (!engineIds.has(profile.engine)) {
      throw new Error(`model ${profile.id} is bound to engine ${profile.engine}, which is not configured (engines: ${[...engineIds].join(', ')})`);
    }
  }
  return new ModelCatalogue(profiles.values());
}
