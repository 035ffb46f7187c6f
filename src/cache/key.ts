/**
 * @module cache/key
 * The audio cache's key: a SHA-256 over a canonical encoding of everything
 * that decides a response's audio, so a change to any of it can never find
 * the old audio:
 * - the engine id and the engine's fingerprint (its type, its model files'
 *   digests or its package version, its configuration);
 * - the voice id and its revision (a digest of its record, its clip and its
 *   loudness gain on that engine);
 * - the transcript as sent and the segments made from it, after tags and
 *   the pronunciation dictionary (whose items are part of the key too),
 *   with SSML's phonemes and language on them;
 * - language, speed, volume, the output format, whether the audio is
 *   streamed (a streamed WAV's header differs from a clip's) and whether
 *   word timestamps were asked;
 * - the scope: the organisation that made it, or `shared` for built-in voices
 *   when `cache.shareAcrossOrganisations` is on.
 *
 * The encoding is JSON with object keys sorted at every level, after a
 * version tag; numbers are JavaScript's shortest round-trip form, so equal
 * values always encode alike.
 */
import * as crypto from 'node:crypto';

/** `crypto.hash` (one call, no Hash object: half the cost for short inputs) where Node has it (20.12 on), else a Hash. */
const hashOnce: (algorithm: string, data: string | Buffer, encoding: 'hex') => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (crypto as unknown as { hash: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash
    : (algorithm, data, encoding) => crypto.createHash(algorithm).update(data).digest(encoding);
import type { OutputFormat } from '../audio/format.js';

/** Bumped whenever the encoding or the stored entry's meaning changes: every older key is then a miss. */
const KEY_VERSION = 'voicegate-audio-cache/1';

export type KeySegment =
  | { kind: 'text'; text: string; speed: number; gain: number; pitch?: number; phonemes?: readonly { from: number; to: number; ipa: string }[]; language?: string; speaker?: number }
  | { kind: 'silence'; seconds: number };

export interface CacheKeyIngredients {
  /** The organisation the entry belongs to, or `shared` (built-in voices with sharing on). */
  scope: string;
  engine: { id: string; fingerprint: string };
  voice: { id: string; revision: string };
  /** A dialogue's turns' voices, in order (the segments name them by index); absent: `voice` speaks it all. */
  speakers?: readonly { id: string; revision: string }[];
  transcript: string;
  segments: readonly KeySegment[];
  /** The dictionary's items, in order; null without a dictionary. */
  pronunciation: readonly { text: string; alias: string; case_sensitive?: boolean }[] | null;
  language: string | null;
  speed: number;
  volume: number;
  format: OutputFormat;
  streaming: boolean;
  timestamps: boolean;
}

/** JSON with every object's keys sorted, undefined members left out: one text per value. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return JSON.stringify(value) ?? 'null';
  }
  // Built by appending, not with entries, filter, map and join: it runs on every request the cache may answer.
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i] ?? null);
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, as `<` does.
  const keys = Object.keys(record).sort();
  out = '{';
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out += (out.length > 1 ? ',' : '') + JSON.stringify(key) + ':' + canonicalJson(item);
  }
  return out + '}';
}

export function sha256Hex(data: string | Buffer): string {
  return hashOnce('sha256', data, 'hex');
}

/** The entry's key: 64 hex digits. */
export function audioCacheKey(ingredients: CacheKeyIngredients): string {
  const { format } = ingredients;
  const normalised = {
    ...ingredients,
    segments: ingredients.segments.map((s) =>
      s.kind === 'text'
        ? { kind: s.kind, text: s.text, speed: s.speed, gain: s.gain, pitch: s.pitch, phonemes: s.phonemes?.map(({ from, to, ipa }) => ({ from, to, ipa })), language: s.language, speaker: s.speaker }
        : { kind: s.kind, seconds: s.seconds },
    ),
    format: { container: format.container, encoding: format.encoding ?? null, sampleRate: format.sampleRate, bitRate: format.bitRate ?? null },
  };
  return sha256Hex(`${KEY_VERSION}\n${canonicalJson(normalised)}`);
}

/**
 * What of a voice decides its audio on an engine: a digest of its record (profiles, language, clip
 * length, transcript), its clip's digest and its loudness gain there.
 */
export function voiceRevision(
  voice: { id: string; ownerOrgId: string | null; language: string; createdAt: string; profiles: unknown; clipSeconds?: number; transcript?: string | null },
  clipDigest: string | null,
  gain: number,
): string {
  return sha256Hex(
    canonicalJson({
      id: voice.id,
      owner: voice.ownerOrgId,
      language: voice.language,
      createdAt: voice.createdAt,
      profiles: voice.profiles ?? null,
      clipSeconds: voice.clipSeconds ?? null,
      transcript: voice.transcript ?? null,
      clip: clipDigest,
      gain,
    }),
  );
}
