/**
 * @module models/generation-config
 * Validates `generation_config` (speed, volume) against the model profile.
 * Speed must be 1 on a stream unless the profile says otherwise (`speedOnStreams`): the
 * seeds' documented contract keeps speed changes to whole clips.
 */
import { ApiError } from '../errors/api-error.js';
import type { ModelProfile, Range } from './profile.js';

export interface GenerationSettings {
  speed: number;
  volume: number;
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_generation_config', { reason });
}

function inRange(name: string, value: unknown, range: Range | null, model: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`generation_config.${name} must be a number`);
  if (!range) throw invalid(`generation_config.${name} is not supported by ${model}`);
  if (value < range.min || value > range.max) {
    throw invalid(`generation_config.${name} must be between ${range.min} and ${range.max}; got ${value}`);
  }
  return value;
}

export function resolveGenerationConfig(raw: unknown, model: ModelProfile, streaming: boolean): GenerationSettings {
  if (raw === undefined || raw === null) return { speed: 1, volume: 1 };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('generation_config must be an object');
  const fields = raw as Record<string, unknown>;
  const speed = inRange('speed', fields.speed, model.speed, model.id) ?? 1;
  const volume = inRange('volume', fields.volume, model.volume, model.id) ?? 1;
  if (streaming && speed !== 1 && !model.speedOnStreams) throw invalid('generation_config.speed must be 1 when streaming');
  return { speed, volume };
}
