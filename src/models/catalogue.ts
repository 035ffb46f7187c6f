/**
 * @module models/catalogue
 * The model ids this server answers to: the shipped profiles with the
 * config's overrides applied, plus models the config defines by extending
 * one. Each is checked against the configured engines at start-up.
 */
import { OPUS_SAMPLE_RATES, opusFormatProblem } from '../audio/opus.js';
import type { ModelConfig } from '../config/schema.js';
import { BUILTIN_MODELS } from './builtin.js';
import type { FormatRules, ModelProfile } from './profile.js';

export class ModelCatalogue {
  private readonly models = new Map<string, ModelProfile>();

  constructor(profiles: Iterable<ModelProfile>) {
    for (const profile of profiles) this.models.set(profile.id, profile);
  }

  get(id: string): ModelProfile | undefined {
    return this.models.get(id);
  }

  /** Adds a model while the server runs (an imported one). */
  add(profile: ModelProfile): void {
    this.models.set(profile.id, profile);
  }

  /** Removes model `id`: requests that name it from now on get 404 `model_not_found`. */
  remove(id: string): void {
    this.models.delete(id);
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

/** Why `rules` cannot serve Ogg Opus as configured, or null (also when opus is not offered). */
function opusRulesProblem(rules: FormatRules): string | null {
  if (!rules.containers.includes('opus')) return null;
  const bitRates = rules.opusBitRates ?? [];
  if (bitRates.length === 0) return 'allows opus but lists no opusBitRates';
  for (const bitRate of bitRates) {
    const problem = opusFormatProblem(48000, bitRate);
    if (problem) return `opusBitRates: ${problem}`;
  }
  if (rules.defaultOpusBitRate !== undefined && !bitRates.includes(rules.defaultOpusBitRate)) {
    return `defaultOpusBitRate ${rules.defaultOpusBitRate} is not among opusBitRates (${bitRates.join(', ')})`;
  }
  if (!rules.sampleRates.some((r) => OPUS_SAMPLE_RATES.includes(r))) {
    return `allows opus but none of its sampleRates is one Opus takes (${OPUS_SAMPLE_RATES.join(', ')})`;
  }
  return null;
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
    for (const [name, rules] of [['clip', profile.clip], ['stream', profile.stream]] as const) {
      const problem = opusRulesProblem(rules);
      if (problem) throw new Error(`model ${profile.id}: ${name} ${problem}`);
    }
    for (const next of profile.fallback ?? []) {
      if (next === profile.id || !profiles.has(next)) throw new Error(`model ${profile.id}: fallback ${next} ${next === profile.id ? 'is the model itself' : 'is not a model'}`);
    }
    if (!engineIds.has(profile.engine)) {
      throw new Error(`model ${profile.id} is bound to engine ${profile.engine}, which is not configured (engines: ${[...engineIds].join(', ')})`);
    }
  }
  return new ModelCatalogue(profiles.values());
}
