/**
 * @module api/dictionaries
 * Pronunciation dictionaries in the Cartesia shapes: create, list (cursor
 * paging), get, update and delete, each scoped to the caller's
 * organisation. Another organisation's dictionary is "not found", never
 * listed. The collection is served with and without the trailing slash the
 * Cartesia SDK sends.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { LOCAL_ORG_ID, type Caller } from '../synthesis/gate.js';
import type { Services } from '../services.js';
import type { PronunciationDict, PronunciationItem } from '../store/store.js';
import { countCharacters } from '../synthesis/characters.js';
import { pageByCursor } from './paging.js';
import { authenticateRequest } from '../http/credentials.js';
import { requireScope, type Scope } from '../accounts/scopes.js';

export const MAX_NAME_CHARS = 200;
export const MAX_ITEMS = 5000;
export const MAX_ITEM_TEXT_CHARS = 500;
export const MAX_ALIAS_CHARS = 2000;

export function dictToJson(dict: PronunciationDict) {
  return {
    id: dict.id,
    name: dict.name,
    items: dict.items,
    owner_id: dict.orgId,
    pinned: dict.pinned,
    created_at: dict.createdAt,
  };
}

/** The owning organisation; without one the caller is the implicit local organisation. */
export function ownerOf(caller: Caller): string {
  return caller.orgId ?? LOCAL_ORG_ID;
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

function bodyOf(request: FastifyRequest): Record<string, unknown> {
  const value = request.body;
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_json', { reason: `; got ${Array.isArray(value) ? 'an array' : typeof value}` });
  return value as Record<string, unknown>;
}

function parseName(value: unknown): string {
  if (typeof value !== 'string' || !value.trim() || countCharacters(value) > MAX_NAME_CHARS) {
    throw invalid(`name must be a non-blank string of at most ${MAX_NAME_CHARS} characters`);
  }
  return value;
}

function parsePinned(value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalid('pinned must be a boolean');
  return value;
}

/** Checks every item and keeps only the documented fields. */
function parseItems(value: unknown): PronunciationItem[] {
  if (!Array.isArray(value)) throw invalid('items must be an array of {text, alias, case_sensitive?}');
  if (value.length > MAX_ITEMS) throw invalid(`items has ${value.length} entries; the maximum is ${MAX_ITEMS}`);
  return value.map((raw: unknown, index) => {
    const at = `items[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(`${at} must be an object {text, alias, case_sensitive?}`);
    const { text, alias, case_sensitive: caseSensitive } = raw as Record<string, unknown>;
    if (typeof text !== 'string' || !text.trim() || countCharacters(text) > MAX_ITEM_TEXT_CHARS) {
      throw invalid(`${at}.text must be a non-blank string of at most ${MAX_ITEM_TEXT_CHARS} characters`);
    }
    if (typeof alias !== 'string' || countCharacters(alias) > MAX_ALIAS_CHARS) {
      throw invalid(`${at}.alias must be a string of at most ${MAX_ALIAS_CHARS} characters`);
    }
    if (caseSensitive === undefined || caseSensitive === null) return { text, alias };
    if (typeof caseSensitive !== 'boolean') throw invalid(`${at}.case_sensitive must be a boolean`);
    return { text, alias, case_sensitive: caseSensitive };
  });
}

export function registerDictionaries(app: FastifyInstance, services: Services): void {
  const { dicts } = services.store;
  type ById = { Params: { id: string } };

  /** The caller's organisation, once it holds `scope`. */
  async function authorised(request: FastifyRequest, scope: Scope) {
    const caller = await authenticateRequest(services.gate, request);
    requireScope(caller, scope);
    return caller;
  }

  /** The caller's dictionary, or 404 whether it is missing or someone else's. */
  async function owned(request: FastifyRequest<ById>, scope: Scope): Promise<PronunciationDict> {
    const orgId = ownerOf(await authorised(request, scope));
    const dict = await dicts.get(request.params.id);
    if (!dict || dict.orgId !== orgId) throw new ApiError('dict_not_found', { id: request.params.id });
    return dict;
  }

  for (const path of ['/pronunciation-dicts/', '/pronunciation-dicts']) {
    app.post(path, async (request) => {
      const orgId = ownerOf(await authorised(request, 'dictionaries:write'));
      const body = bodyOf(request);
      const name = parseName(body.name);
      const items = body.items === undefined || body.items === null ? [] : parseItems(body.items);
      const pinned = body.pinned === undefined || body.pinned === null ? false : parsePinned(body.pinned);
      const dict = await dicts.create({ id: `pd_${randomBytes(8).toString('hex')}`, orgId, name, items, pinned, createdAt: new Date().toISOString() });
      return dictToJson(dict);
    });
    app.get<{ Querystring: Record<string, unknown> }>(path, async (request) => {
      const orgId = ownerOf(await authorised(request, 'dictionaries:read'));
      const page = pageByCursor(await dicts.list(orgId), request.query);
      return { data: page.data.map(dictToJson), has_more: page.has_more };
    });
  }

  app.get<ById>('/pronunciation-dicts/:id', async (request) => dictToJson(await owned(request, 'dictionaries:read')));

  app.patch<ById>('/pronunciation-dicts/:id', async (request) => {
    const dict = await owned(request, 'dictionaries:write');
    const body = bodyOf(request);
    const patch: Partial<Pick<PronunciationDict, 'name' | 'items' | 'pinned'>> = {};
    if (body.name !== undefined && body.name !== null) patch.name = parseName(body.name);
    if (body.items !== undefined && body.items !== null) patch.items = parseItems(body.items);
    if (body.pinned !== undefined && body.pinned !== null) patch.pinned = parsePinned(body.pinned);
    const updated = await dicts.update(dict.id, patch);
    if (!updated) throw new ApiError('dict_not_found', { id: dict.id });
    return dictToJson(updated);
  });

  app.delete<ById>('/pronunciation-dicts/:id', async (request, reply) => {
    const dict = await owned(request, 'dictionaries:write');
    if (!(await dicts.delete(dict.id))) throw new ApiError('dict_not_found', { id: dict.id });
    return reply.code(204).send();
  });
}
