/**
 * @module store/account-rows
 * The rows of organisations, API keys, cloned voices and pronunciation
 * dictionaries as both stores name their columns, and their mapping to the
 * records of `store.ts`. Only the column types differ: times are ISO text in
 * SQLite and `Date` from PostgreSQL; a dictionary's items are JSON text and
 * its `pinned` an integer in SQLite, `jsonb` and `boolean` in PostgreSQL.
 */
import type { ApiKeyRecord, BudgetPeriod, KeyPolicy, KeyRepository, Org, OrgLimits, PronunciationDict, StoredVoice } from './store.js';

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
  budget_credits: number | string | null;
  budget_period: BudgetPeriod | null;
  /** JSON text (SQLite) or `text[]` (PostgreSQL). */
  scopes: string | string[] | null;
  models: string | string[] | null;
  expires_at: T | null;
  allowed_networks: string | string[] | null;
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

const list = (value: string | string[] | null): string[] | null => (value === null ? null : typeof value === 'string' ? JSON.parse(value) : value);

export function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
    budget: row.budget_credits !== null && row.budget_period !== null ? { credits: Number(row.budget_credits), period: row.budget_period } : null,
    scopes: list(row.scopes),
    models: list(row.models),
    expiresAt: isoOrNull(row.expires_at),
    allowedNetworks: list(row.allowed_networks),
  };
}

/** The policy columns a key's fields set (`fields` left out are not named), lists as `asList` stores them. */
export function policyColumns(fields: Partial<KeyPolicy & { name: string | null }>, asList: (value: string[] | null) => unknown): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  if ('name' in fields) columns.name = fields.name ?? null;
  if ('budget' in fields) {
    columns.budget_credits = fields.budget?.credits ?? null;
    columns.budget_period = fields.budget?.period ?? null;
  }
  if ('scopes' in fields) columns.scopes = asList(fields.scopes ?? null);
  if ('models' in fields) columns.models = asList(fields.models ?? null);
  if ('expiresAt' in fields) columns.expires_at = fields.expiresAt ?? null;
  if ('allowedNetworks' in fields) columns.allowed_networks = asList(fields.allowedNetworks ?? null);
  return columns;
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

/** Every column of a new key's row; policy fields left out are null (no limit). */
export function newKeyColumns(key: Parameters<KeyRepository['create']>[0], asList: (value: string[] | null) => unknown): Record<string, unknown> {
  const { budget = null, scopes = null, models = null, expiresAt = null, allowedNetworks = null } = key;
  return {
    id: key.id,
    org_id: key.orgId,
    secret_hash: key.secretHash,
    created_at: key.createdAt,
    ...policyColumns({ name: key.name, budget, scopes, models, expiresAt, allowedNetworks }, asList),
  };
}
