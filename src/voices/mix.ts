/**
 * @module voices/mix
 * A mixed voice: several voices by weight, stored (`POST /voices/mix`) or
 * named inline as Kokoro-FastAPI and Together accept it (`af_bella(2)+af_sky(1)`,
 * a bare id weighing 1). The rules are checked before anything is spoken or
 * billed: weights are finite and non-negative, at least one is above 0, a
 * weight of 0 leaves its voice out, at most `voices.maxMix` voices, each
 * named once, none of them a mix. Each engine mixes in its own way
 * (`Engine.mixProfiles`); the mix is a voice of its own, with its own id,
 * audio-cache revision and loudness gain.
 */
import { ApiError } from '../errors/api-error.js';
import type { Voice } from './voice.js';

export interface MixPart {
  id: string;
  weight: number;
}

/** A part of a resolved mix: the voice and its share (the shares sum to 1). */
export interface MixedVoicePart {
  voice: Voice;
  weight: number;
}

export const DEFAULT_MAX_MIX = 4;

const PART = /^([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})(?:\(\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*\))?$/i;

/** The parts of an inline mix id (`a(2)+b(1)`, `a+b`), or null when the id is not one. */
export function parseInlineMix(id: string): MixPart[] | null {
  if (id.length > 1000 || !/[+(]/.test(id)) return null;
  const parts: MixPart[] = [];
  for (const piece of id.split('+')) {
    const match = PART.exec(piece.trim());
    if (!match) throw new ApiError('invalid_request', { reason: `voice ${JSON.stringify(id.slice(0, 200))} is not a voice mix: write voice ids joined by +, each with an optional weight in parentheses, e.g. af_bella(2)+af_sky(1)` });
    parts.push({ id: match[1], weight: match[2] === undefined ? 1 : Number(match[2]) });
  }
  return parts;
}

/** Checks a mix's parts and gives them back with their shares (zero weights left out), largest first. */
export function checkMix(parts: readonly MixPart[], maxMix: number): MixPart[] {
  const bad = (reason: string) => new ApiError('invalid_request', { reason });
  if (!Array.isArray(parts) || parts.length === 0) throw bad('a voice mix needs at least one voice');
  if (parts.length > maxMix) throw bad(`a voice mix has at most ${maxMix} voices; got ${parts.length}`);
  const seen = new Set<string>();
  for (const part of parts) {
    if (typeof part?.id !== 'string' || !part.id) throw bad('each voice of a mix needs an id');
    if (typeof part.weight !== 'number' || !Number.isFinite(part.weight) || part.weight < 0) throw bad(`the weight of ${part.id} must be a number of 0 or more`);
    if (seen.has(part.id)) throw bad(`${part.id} is named twice in the mix`);
    seen.add(part.id);
  }
  const total = parts.reduce((sum, part) => sum + part.weight, 0);
  if (!(total > 0)) throw bad('at least one voice of a mix needs a weight above 0');
  return parts
    .filter((part) => part.weight > 0)
    .map((part) => ({ id: part.id, weight: part.weight / total }))
    .sort((a, b) => b.weight - a.weight || a.id.localeCompare(b.id));
}

/** The canonical inline id of checked parts: the same mix always has the same id (and so cache entries and gain). */
export function mixId(parts: readonly MixPart[]): string {
  return [...parts]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((part) => `${part.id}(${Number(part.weight.toFixed(4))})`)
    .join('+');
}

/** A mix as a voice: named after its parts, speaking the language of its largest. */
export function mixedVoice(base: Pick<Voice, 'id' | 'name' | 'description' | 'ownerOrgId' | 'createdAt'> & Partial<Voice>, parts: MixedVoicePart[]): Voice {
  const lead = parts[0].voice;
  return {
    gender: parts.every((p) => p.voice.gender === lead.gender) ? lead.gender : 'gender_neutral',
    language: lead.language,
    accent: null,
    profiles: {},
    ...base,
    mix: parts,
  };
}
