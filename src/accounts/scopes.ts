/**
 * @module accounts/scopes
 * What an API key may do, by scope. A key's `scopes` name some of `SCOPES`;
 * null (every key made before scopes existed, and any key made without
 * them) is every scope. The caller carries its scopes (`Caller.scopes`), so
 * a route checks one in one line: `requireScope(caller, 'voices:write')`.
 * Routes that need any valid key only (`/models`, `/concurrency`,
 * ElevenLabs' `/v1/models`) check none. docs/billing.md has the table of
 * scopes and routes.
 */
import { ApiError } from '../errors/api-error.js';
import type { Caller } from '../synthesis/gate.js';

export const SCOPES = ['tts', 'voices:read', 'voices:write', 'dictionaries:read', 'dictionaries:write', 'jobs:read', 'usage:read'] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}

/** What an access token can be used for, whatever its key allows beyond that: TTS (jobs included), reading voices, and reading its jobs. */
export const TOKEN_SCOPES: readonly Scope[] = ['tts', 'voices:read', 'jobs:read'];

/**
 * The scopes a caller holds: its key's (null: every scope), and for an access token only those of
 * its key's that a token can carry, so a token never does more than the key it was made from.
 */
export function callerScopes(keyScopes: readonly string[] | null, token: boolean): readonly string[] | null {
  if (!token) return keyScopes;
  return TOKEN_SCOPES.filter((scope) => keyScopes === null || keyScopes.includes(scope));
}

/** Whether the caller holds `scope` (a caller without a scope list, as when accounts are off, holds every one). */
export function hasScope(caller: Pick<Caller, 'scopes'>, scope: Scope): boolean {
  return !caller.scopes || caller.scopes.includes(scope);
}

/** Refuses a caller without `scope`: 403 `insufficient_scope`, naming it. */
export function requireScope(caller: Pick<Caller, 'scopes'>, scope: Scope): void {
  if (!hasScope(caller, scope)) throw new ApiError('insufficient_scope', { scope });
}
