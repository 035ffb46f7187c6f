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

export function fromStored(stored: StoredVoice): Voice {
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
  /** Decoded clips of the cloned voices in use. */
  readonly references: ReferenceClips;

  constructor(
    voices: Iterable<Voice>,
    private readonly store: Store,
    referenceLimits: ReferenceCacheLimits = REFERENCE_CACHE_DEFAULTS,
  ) {
    for (const voice of voices) this.builtin.set(voice.id, voice);
    this.references = new ReferenceClips(store, referenceLimits);
  }

  /** A cloned voice's clip and transcript, for an engine that clones. */
  reference(voice: Voice): Promise<VoiceReference> {
    return this.references.get(voice);
  }

  /** Adds voices discovered after start (e.g. an engine's own voice list). */
  addBuiltin(voices: Iterable<Voice>): void {
    for (const voice of voices) if (!this.builtin.has(voice.id)) this.builtin.set(voice.id, voice);
  }

  isBuiltin(id: string): boolean {
    return this.builtin.has(id);
  }

  async get(id: string, orgId: string | null): Promise<Voice | null> {
    const builtin = this.builtin.get(id);
    if (builtin) return builtin;
    const stored = await this.store.voices.get(id);
    return stored && stored.orgId === orgId ? fromStored(stored) : null;
  }

  /** The caller's own voices (newest first), then the built-in ones. */
  async list(orgId: string | null): Promise<Voice[]> {
    const own = orgId ? (await this.store.voices.list(orgId)).map(fromStored) : [];
    return [...own, ...this.builtin.values()];
  }
}
