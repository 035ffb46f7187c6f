/**
 * @module voices/reference
 * The reference a cloning engine speaks a cloned voice from: the voice's
 * stored clip decoded to float samples, with the clip's transcript. Decoding
 * is done once per voice and kept, within a bound on entries and on bytes,
 * least recently used first out, so a voice in use is not read from the
 * store and decoded on every request. Concurrent first requests share one
 * decode. The samples sit in shared memory, so worker-thread engines take
 * them without a copy.
 *
 * The clip of a voice never changes once stored (a voice is cloned again
 * under a new id), so a kept entry cannot go stale; the transcript can be
 * edited, so it is taken from the voice record of each request instead.
 */
import { createHash } from 'node:crypto';
import { decodeToFloat } from '../audio/decode.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../store/store.js';
import type { Voice } from './voice.js';

/** A cloned voice's reference: its stored clip, decoded, and what the clip says. */
export interface VoiceReference {
  /**
   * Mono samples, −1…1, in shared memory (a `SharedArrayBuffer`), so a worker thread reads them
   * without a copy. Shared by every request for the voice: read it, never write it.
   */
  audio: Float32Array;
  sampleRate: number;
  /** The clip's transcript, when the voice has one. */
  text?: string;
  /** SHA-256 of the stored clip, hex: what the audio cache's voice revision takes from the clip. */
  digest?: string;
}

export interface ReferenceCacheLimits {
  /** Voices kept at most. */
  maxEntries: number;
  /** Bytes of samples kept at most (a 120 s clip at 24 kHz is 11.5 MB). */
  maxBytes: number;
}

export const REFERENCE_CACHE_DEFAULTS: ReferenceCacheLimits = { maxEntries: 64, maxBytes: 64 * 1024 * 1024 };

interface Decoded {
  audio: Float32Array;
  sampleRate: number;
  digest: string;
}

export class ReferenceClips {
  /** Insertion order is recency: a hit is moved to the end, the first entry goes first. */
  private readonly kept = new Map<string, Decoded>();
  private readonly decoding = new Map<string, Promise<Decoded>>();
  private bytes = 0;
  /** Clips read from the store and decoded (misses), for tests and diagnostics. */
  decodes = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: ReferenceCacheLimits = REFERENCE_CACHE_DEFAULTS,
  ) {}

  /** The reference of a cloned voice; throws `voice_not_found` when its clip is gone (deleted meanwhile). */
  async get(voice: Voice): Promise<VoiceReference> {
    const decoded = await this.decoded(voice.id);
    const text = voice.transcript?.trim();
    const { audio, sampleRate, digest } = decoded;
    return text ? { audio, sampleRate, text, digest } : { audio, sampleRate, digest };
  }

  /** Voices and bytes kept now. */
  stats(): { entries: number; bytes: number } {
    return { entries: this.kept.size, bytes: this.bytes };
  }

  private async decoded(id: string): Promise<Decoded> {
    const hit = this.kept.get(id);
    if (hit) {
      this.kept.delete(id);
      this.kept.set(id, hit);
      return hit;
    }
    let pending = this.decoding.get(id);
    if (!pending) {
      pending = this.load(id).finally(() => this.decoding.delete(id));
      this.decoding.set(id, pending);
    }
    return pending;
  }

  private async load(id: string): Promise<Decoded> {
    const clip = await this.store.voices.clip(id);
    if (!clip) throw new ApiError('voice_not_found', { id });
    this.decodes++;
    let decoded;
    try {
      decoded = await decodeToFloat(clip, { container: 'wav', sampleRate: 0 });
    } catch (err) {
      // Checked when it was cloned, so this is damage in storage, not the caller's doing.
      throw new ApiError('engine_error', { reason: `: the stored clip of voice ${id} could not be read (${(err as Error).message})` });
    }
    const { samples, sampleRate } = decoded;
    const audio = new Float32Array(new SharedArrayBuffer(samples.byteLength));
    audio.set(samples);
    const digest = createHash('sha256').update(clip).digest('hex');
    this.keep(id, { audio, sampleRate, digest });
    return { audio, sampleRate, digest };
  }

  private keep(id: string, decoded: Decoded): void {
    const size = decoded.audio.byteLength;
    if (size > this.limits.maxBytes || this.limits.maxEntries < 1) return;
    while (this.kept.size >= this.limits.maxEntries || this.bytes + size > this.limits.maxBytes) {
      const [oldest, entry] = this.kept.entries().next().value!;
      this.kept.delete(oldest);
      this.bytes -= entry.audio.byteLength;
    }
    this.kept.set(id, decoded);
    this.bytes += size;
  }
}
