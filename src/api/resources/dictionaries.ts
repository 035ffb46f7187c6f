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
import { ApiError } from '../../errors/api-error.js';
import { LOCAL_ORG_ID, type Caller } from '../../synthesis/gate.js';
import type { Services } from '../../services.js';
import type { PronunciationDict, PronunciationItem } from '../../store/store.js';
import { countCharacters } from '../../synthesis/characters.js';
import { cursorQuerySchema, pageByCursor } from './paging.js';
import { component, errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';
import { authenticateRequest } from '../../http/credentials.js';
import { requireScope, type Scope } from '../../accounts/scopes.js';

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


const NAME = `name must be a non-blank string of at most ${MAX_NAME_CHARS} characters`;
const name = z
  .string({ error: NAME })
  .refine((value) => value.trim() !== '' && countCharacters(value) <= MAX_NAME_CHARS, { error: NAME })
  .meta({ minLength: 1, maxLength: MAX_NAME_CHARS })
  .describe(`1–${MAX_NAME_CHARS} characters, not blank.`);
const pinned = z.boolean({ error: 'pinned must be a boolean' }).describe('Applied to every request of the organisation without a dictionary of its own.');

/** One entry; each refusal is said of `items[<index>]` (`items` below). */
const itemSchema = z.looseObject(
  {
    text: z
      .string({ error: `.text must be a non-blank string of at most ${MAX_ITEM_TEXT_CHARS} characters` })
      .refine((text) => text.trim() !== '' && countCharacters(text) <= MAX_ITEM_TEXT_CHARS, { error: `.text must be a non-blank string of at most ${MAX_ITEM_TEXT_CHARS} characters` })
      .meta({ minLength: 1, maxLength: MAX_ITEM_TEXT_CHARS }),
    alias: z
      .string({ error: `.alias must be a string of at most ${MAX_ALIAS_CHARS} characters` })
      .refine((alias) => countCharacters(alias) <= MAX_ALIAS_CHARS, { error: `.alias must be a string of at most ${MAX_ALIAS_CHARS} characters` })
      .meta({ maxLength: MAX_ALIAS_CHARS }),
    case_sensitive: z.boolean({ error: '.case_sensitive must be a boolean' }).nullish(),
  },
  { error: ' must be an object {text, alias, case_sensitive?}' },
);
const { $schema: _drop, ...itemsJson } = z.toJSONSchema(z.array(itemSchema).max(MAX_ITEMS), { unrepresentable: 'any' }) as Record<string, unknown>;

const ITEMS = 'items must be an array of {text, alias, case_sensitive?}';
const items = z
  .array(z.unknown(), { error: ITEMS })
  .superRefine((list, ctx) => {
    if (list.length > MAX_ITEMS) return void ctx.addIssue({ code: 'custom', message: `items has ${list.length} entries; the maximum is ${MAX_ITEMS}` });
    for (const [index, raw] of list.entries()) {
      const parsed = itemSchema.safeParse(raw);
      if (!parsed.success) return void ctx.addIssue({ code: 'custom', message: `items[${index}]${parsed.error.issues[0].message}`, path: [index] });
    }
  })
  .meta(itemsJson)
  .describe('Each `text` (1–500 characters) is spoken as its `alias` (up to 2,000); at most 5,000 entries.');

/** A body that is not an object: `invalid_json` naming what it is; none at all is an empty one. */
const notAnObject = (absent: string) => (issue: { input?: unknown }) =>
  issue.input === undefined || issue.input === null ? absent : `invalid_json: ; got ${Array.isArray(issue.input) ? 'an array' : typeof issue.input}`;

/** `POST /pronunciation-dicts`: null counts as absent. */
const createBody = component('PronunciationDictCreate', z.looseObject({ name, items: items.nullish(), pinned: pinned.nullish() }, { error: notAnObject(NAME) }));
const patchBody = component(
  'PronunciationDictPatch',
  z.looseObject({ name: name.nullish(), items: items.nullish(), pinned: pinned.nullish() }, { error: notAnObject('invalid_json: ; the body is empty') }).describe('Only the fields sent change; `items` replaces the whole list.'),
);

/** The entries as stored: the documented fields only. */
function itemsOf(list: unknown[]): PronunciationItem[] {
  return list.map((raw) => {
    const { text, alias, case_sensitive: caseSensitive } = itemSchema.parse(raw);
    return caseSensitive === undefined || caseSensitive === null ? { text, alias } : { text, alias, case_sensitive: caseSensitive };
  });
}

const KEY_ERRORS = [401, 403, 429, 503];
const TAGS = ['Pronunciation dictionaries'];
const byId = z.object({ id: z.string().describe('The dictionary id (at most 256 characters).') });
const dict = (description: string) => ({ description, content: jsonContent('PronunciationDict') });
const CREATE = { tags: TAGS, summary: 'Create a dictionary', body: createBody, response: { 200: dict('The dictionary.'), ...errorResponses('native', [400, 413, 415, ...KEY_ERRORS]) } };
const LIST = { tags: TAGS, summary: 'List dictionaries', querystring: cursorQuerySchema, response: { 200: { description: 'A page, newest first.', content: jsonContent('PronunciationDictList') }, ...errorResponses('native', [400, ...KEY_ERRORS]) } };
const GET = { tags: TAGS, summary: 'Get a dictionary', params: byId, response: { 200: dict('The dictionary.'), ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]) } };
const PATCH = { tags: TAGS, summary: 'Update a dictionary', params: byId, body: patchBody.nullish(), response: { 200: dict('The dictionary.'), ...errorResponses('native', [400, 404, 413, 414, 415, ...KEY_ERRORS]) } };
const DELETE = { tags: TAGS, summary: 'Delete a dictionary', params: byId, response: { 204: { description: 'Deleted.' }, ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]) } };

export function registerDictionaries(app: FastifyInstance, services: Services): void {
  const { dicts } = services.store;
  type ById = { Params: { id: string } };

  /** The caller's organisation, once it holds `scope`. */
  async function authorised(request: FastifyRequest, scope: Scope) {
    const caller = await authenticateRequest(services.gate, request);
    requireScope(caller, scope);
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    return caller;
  }
  const declared = <S>(schema: S) => ({ schema, attachValidation: true, config: { auth: 'key' as const } });

  /** The caller's dictionary, or 404 whether it is missing or someone else's. */
  async function owned(request: FastifyRequest<ById>, scope: Scope): Promise<PronunciationDict> {
    const orgId = ownerOf(await authorised(request, scope));
    const dict = await dicts.get(request.params.id);
    if (!dict || dict.orgId !== orgId) throw new ApiError('dict_not_found', { id: request.params.id });
    return dict;
  }

  for (const path of ['/pronunciation-dicts/', '/pronunciation-dicts']) {
    app.post(path, declared(CREATE), async (request) => {
      const orgId = ownerOf(await authorised(request, 'dictionaries:write'));
      const body = request.body as z.infer<typeof createBody>;
      const dict = await dicts.create({ id: `pd_${randomBytes(8).toString('hex')}`, orgId, name: body.name, items: itemsOf(body.items ?? []), pinned: body.pinned ?? false, createdAt: new Date().toISOString() });
      return dictToJson(dict);
    });
    app.get<{ Querystring: Record<string, unknown> }>(path, declared(LIST), async (request) => {
      const orgId = ownerOf(await authorised(request, 'dictionaries:read'));
      const page = pageByCursor(await dicts.list(orgId), request.query);
      return { data: page.data.map(dictToJson), has_more: page.has_more };
    });
  }

  app.get<ById>('/pronunciation-dicts/:id', declared(GET), async (request) => dictToJson(await owned(request, 'dictionaries:read')));

  app.patch<ById>('/pronunciation-dicts/:id', declared(PATCH), async (request) => {
    const dict = await owned(request, 'dictionaries:write');
    // No body: nothing changes.
    const body = (request.body ?? {}) as z.infer<typeof patchBody>;
    const patch: Partial<Pick<PronunciationDict, 'name' | 'items' | 'pinned'>> = {};
    if (body.name !== undefined && body.name !== null) patch.name = body.name;
    if (body.items !== undefined && body.items !== null) patch.items = itemsOf(body.items);
    if (body.pinned !== undefined && body.pinned !== null) patch.pinned = body.pinned;
    const updated = await dicts.update(dict.id, patch);
    if (!updated) throw new ApiError('dict_not_found', { id: dict.id });
    return dictToJson(updated);
  });

  app.delete<ById>('/pronunciation-dicts/:id', declared(DELETE), async (request, reply) => {
    const dict = await owned(request, 'dictionaries:write');
    if (!(await dicts.delete(dict.id))) throw new ApiError('dict_not_found', { id: dict.id });
    return reply.code(204).send();
  });
}
