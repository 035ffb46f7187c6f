/**
 * @module store/account-rows
 * The rows of organisations, API keys, cloned voices and pronunciation
 * dictionaries as both stores name their columns, and their mapping to the
 * records of `store.ts`. Only the column types differ: times are ISO text in
 * SQLite and `Date` from PostgreSQL; a dictionary's items are JSON text and
 * its `pinned` an integer in SQLite, `jsonb` and `boolean` in PostgreSQL.
 */
import type { ApiKeyRecord, Org, OrgLimits, PronunciationDict, StoredVoice } from './store.js';

type Time = string | Date;

export const iso = (time: Time): string => (typeof time === 'string' ? time : time.toISOString());
export const isoOrNull = (time: Time | null): string | null => (time === null ? null : iso(time));

export interface OrgRow<T extends Time = Time> {
  id: string;
  name: string;
  created_at: T;
  balance: number;
  max_concurrent: number | null;
  rate_requests: number | null;
  rate_per_seconds: number | null;
}

export interface KeyRow<T extends Time = Time> {
  id: string;
  org_id: string;
  name: string | null;
  secret_hash: string;
  created_at: T;
  last_used_at: T | null;
  revoked_at: T | null;
}

/** A voice's own columns; its engine profiles come from `voice_profiles` (each store gathers them its way). */
export interface VoiceRow<T extends Time = Time> {
  id: string;
  org_id: string;
  name: string;
  description: string;
  gender: StoredVoice['gender'];
  language: string;
  accent: string | null;
  transcript: string | null;
  clip_seconds: number;
  created_at: T;
}

export interface DictRow<T extends Time = Time> {
  id: string;
  org_id: string;
  name: string;
  /** JSON text (SQLite) or the parsed `jsonb` (PostgreSQL). */
  items: string | PronunciationDict['items'];
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  pinned: number | boolean;
  created_at: T;
  updated_at: T;
}

export function toOrg(row: OrgRow): Org {
  return {
    id: row.id,
    name: row.name,
    createdAt: iso(row.created_at),
    balance: row.balance,
    limits: {
      maxConcurrent: row.max_concurrent,
      rateLimit: row.rate_requests !== null && row.rate_per_seconds !== null ? { requests: row.rate_requests, perSeconds: row.rate_per_seconds } : null,
    },
  };
}

/** An organisation's limits as its columns, in column order (`max_concurrent`, `rate_requests`, `rate_per_seconds`). */
export function limitValues(limits: OrgLimits): [number | null, number | null, number | null] {
  return [limits.maxConcurrent, limits.rateLimit?.requests ?? null, limits.rateLimit?.perSeconds ?? null];
}

export function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

export function toVoice(row: VoiceRow, profiles: Record<string, unknown>): StoredVoice {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    description: row.description,
    gender: row.gender,
    language: row.language,
    accent: row.accent,
    transcript: row.transcript,
    clipSeconds: row.clip_seconds,
    createdAt: iso(row.created_at),
    profiles,
  };
}

export function toDict(row: DictRow): PronunciationDict {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    items: typeof row.items === 'string' ? JSON.parse(row.items) : row.items,
    pinned: row.pinned === true || row.pinned === 1,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
