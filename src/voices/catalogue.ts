/**
 * @module voices/catalogue
 * Looks voices up for a calling organisation. Built-in voices are seen by
 * everyone; an organisation's cloned voices (in the store) only by that
 * organisation — any other caller gets "not found", never "forbidden". It also
 * hands out a cloned voice's decoded clip to the engines that clone
 * (`reference.ts`).
 */
import type { Store, StoredVoice } from '../store/store.js';
import { ReferenceClips, REFERENCE_CACHE_DEFAULTS, type ReferenceCacheLimits, type VoiceReference } from './reference.js';
import type { Voice } from './voice.js';
import { ApiError } from '../errors/api-error.js';
import { checkMix, DEFAULT_MAX_MIX, mixedVoice, mixId, parseInlineMix, type MixPart } from './mix.js';

/** The parts of a stored mix (kept as its `mix` profile), or null for any other voice. */
export function storedMix(voice: Pick<Voice, 'profiles'>): MixPart[] | null {
  const mix = voice.profiles.mix;
  return Array.isArray(mix) ? (mix as MixPart[]) : null;
}

export function fromStored(stored: StoredVoice): Voice {
  // A stored mix keeps no clip: it is not a cloned voice.
  if (storedMix(stored)) {
    return { id: stored.id, name: stored.name, description: stored.description, gender: stored.gender, language: stored.language, accent: stored.accent, ownerOrgId: stored.orgId, createdAt: stored.createdAt, profiles: stored.profiles };
  }
  return {
    id: stored.id,
    name: stored.name,
    description: stored.description,
    gender: stored.gender,
    language: stored.language,
    accent: stored.accent,
    ownerOrgId: stored.orgId,
    createdAt: stored.createdAt,
    profiles: stored.profiles,
    clipSeconds: stored.clipSeconds,
    transcript: stored.transcript,
  };
}

export class VoiceCatalogue {
  private readonly builtin = new Map<string, Voice>();
  /** Another id of a built-in voice (`Voice.aliases`) → the voice. */
  private readonly aliases = new Map<string, Voice>();
  /** Decoded clips of the cloned voices in use. */
  readonly references: ReferenceClips;

  constructor(
    voices: Iterable<Voice>,
    private readonly store: Store,
    referenceLimits: ReferenceCacheLimits = REFERENCE_CACHE_DEFAULTS,
    /** Most voices in a mix (`voices.maxMix`). */
    readonly maxMix = DEFAULT_MAX_MIX,
  ) {
    this.addBuiltin(voices);
    this.references = new ReferenceClips(store, referenceLimits);
  }

  /** A cloned voice's clip and transcript, for an engine that clones. */
  reference(voice: Voice): Promise<VoiceReference> {
    return this.references.get(voice);
  }

  /** Adds voices discovered after start (e.g. an engine's own voice list). */
  addBuiltin(voices: Iterable<Voice>): void {
    for (const voice of voices) {
      if (this.builtin.has(voice.id)) continue;
      this.builtin.set(voice.id, voice);
      for (const alias of voice.aliases ?? []) if (!this.aliases.has(alias)) this.aliases.set(alias, voice);
    }
  }

  /** Removes built-in voices (an imported model's, when it is deleted) and their aliases. */
  removeBuiltin(ids: Iterable<string>): void {
    for (const id of ids) {
      const voice = this.builtin.get(id);
      if (!voice) continue;
      this.builtin.delete(id);
      for (const alias of voice.aliases ?? []) if (this.aliases.get(alias) === voice) this.aliases.delete(alias);
    }
  }

  /** A built-in voice (or an alias of one), without a lookup. */
  builtinVoice(id: string): Voice | undefined {
    return this.builtin.get(id) ?? this.aliases.get(id);
  }

  isBuiltin(id: string): boolean {
    return this.builtin.has(id) || this.aliases.has(id);
  }

  /**
   * The voice `id` as `orgId` sees it. An inline mix (`af_bella(2)+af_sky(1)`) and a stored mix come
   * with their parts looked up; a part that does not exist is `voice_not_found`, and a mix that breaks
   * the rules (voices/mix) `invalid_request`.
   */
  async get(id: string, orgId: string | null): Promise<Voice | null> {
    const builtin = this.builtin.get(id) ?? this.aliases.get(id);
    if (builtin) return builtin;
    const inline = parseInlineMix(id);
    if (inline) {
      const parts = checkMix(inline, this.maxMix);
      const canonical = mixId(parts);
      const names = parts.map((p) => p.id).join(' + ');
      return this.mix({ id: canonical, name: `Mix of ${names}`, description: `${canonical}, mixed per request`, ownerOrgId: null, createdAt: '2025-01-01T00:00:00.000Z' }, parts, orgId);
    }
    const stored = await this.store.voices.get(id);
    if (!stored || stored.orgId !== orgId) return null;
    const voice = fromStored(stored);
    const mix = storedMix(voice);
    return mix ? this.mix(voice, checkMix(mix, Number.MAX_SAFE_INTEGER), orgId) : voice;
  }

  /** The parts of a mix, looked up as `orgId` sees them; none may itself be a mix. */
  async mixParts(parts: readonly MixPart[], orgId: string | null): Promise<{ voice: Voice; weight: number }[]> {
    return Promise.all(
      parts.map(async (part) => {
        const voice = parseInlineMix(part.id) ? null : await this.get(part.id, orgId);
        if (!voice) throw new ApiError('voice_not_found', { id: part.id });
        if (voice.mix || storedMix(voice)) throw new ApiError('invalid_request', { reason: `${part.id} is a mix itself; mix the voices it is made of` });
        return { voice, weight: part.weight };
      }),
    );
  }

  private async mix(base: Voice | Parameters<typeof mixedVoice>[0], parts: MixPart[], orgId: string | null): Promise<Voice> {
    const resolved = await this.mixParts(parts, orgId);
    // An inline mix of an organisation's own voice is that organisation's, as its audio is (the cache's scope).
    const owner = base.ownerOrgId ?? resolved.find((p) => p.voice.ownerOrgId !== null)?.voice.ownerOrgId ?? null;
    return mixedVoice({ ...base, ownerOrgId: owner }, resolved);
  }

  /** The caller's own voices (newest first), then the built-in ones. */
  async list(orgId: string | null): Promise<Voice[]> {
    const own = orgId ? (await this.store.voices.list(orgId)).map(fromStored) : [];
    return [...own, ...this.builtin.values()];
  }
}
