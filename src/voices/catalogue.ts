/**
 * @module voices/catalogue
 * Looks voices up by id for a calling organisation. Built-in voices are seen
 * by everyone; an organisation's own voices (cloned, from the voice store)
 * only by that organisation — any other caller gets "not found".
 */
import type { Voice } from './voice.js';

export class VoiceCatalogue {
  private readonly builtin = new Map<string, Voice>();

  constructor(voices: Iterable<Voice>) {
    for (const voice of voices) this.builtin.set(voice.id, voice);
  }

  /** Adds voices discovered after start (e.g. an engine's own voice list). */
  addBuiltin(voices: Iterable<Voice>): void {
    for (const voice of voices) if (!this.builtin.has(voice.id)) this.builtin.set(voice.id, voice);
  }

  async get(id: string, orgId: string | null): Promise<Voice | null> {
    const voice = this.builtin.get(id);
    if (voice && (voice.ownerOrgId === null || voice.ownerOrgId === orgId)) return voice;
    return null;
  }

  async list(orgId: string | null): Promise<Voice[]> {
    return [...this.builtin.values()].filter((v) => v.ownerOrgId === null || v.ownerOrgId === orgId);
  }
}
