/**
 * @module api/voices
 * The voices API in the Cartesia shapes: list (cursor paging and filters),
 * get, update and delete an organisation's own voices, and clone a voice
 * from an uploaded clip or mix one from others (`POST /voices/mix`). Built-in voices are visible to all and read-only;
 * another organisation's voice is "not found".
 */
import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { Services } from '../../services.js';
import type { StoredVoice, VoicePatch } from '../../store/store.js';
import { prepareClip } from '../../voices/clip.js';
import type { Gender, Voice } from '../../voices/voice.js';
import { cursorQuerySchema, pageByCursor } from './paging.js';
import { component, errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';
import { storedMix } from '../../voices/catalogue.js';
import { checkMix, mixedVoice, type MixPart } from '../../voices/mix.js';
import { authenticateRequest } from '../../http/credentials.js';
import { requireScope } from '../../accounts/scopes.js';

const GENDERS: Gender[] = ['feminine', 'masculine', 'gender_neutral'];
/** Code units of a clip's transcript, at most. */
const MAX_TRANSCRIPT = 5000;

export function voiceToJson(voice: Voice, orgId: string | null) {
  return {
    id: voice.id,
    user_id: voice.ownerOrgId,
    name: voice.name,
    description: voice.description,
    tagline: null,
    gender: voice.gender,
    language: voice.language,
    accent: voice.accent,
    locales: [{ locale: voice.language, is_native: true }],
    is_owner: voice.ownerOrgId !== null && voice.ownerOrgId === orgId,
    access: voice.ownerOrgId === null ? 'public' : 'private',
    visibility: voice.ownerOrgId === null ? 'public' : 'private',
    created_at: voice.createdAt,
    /** Engine types this voice can be spoken by (it has a profile for each). */
    engines: voice.mix || storedMix(voice) ? [] : Object.keys(voice.profiles),
    /** A cloned voice: what its clip says (engines that clone read it); null when not given, and for built-ins. */
    transcript: voice.transcript ?? null,
    /** A mixed voice: its voices and their shares (summing to 1); null for any other voice. */
    mix: voice.mix ? voice.mix.map((p) => ({ id: p.voice.id, weight: p.weight })) : (storedMix(voice) ?? null),
  };
}

function invalid(reason: string): ApiError {
  return new ApiError('invalid_request', { reason });
}

function text(value: unknown, name: string, max: number, required: boolean): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalid(`${name} is required`);
    return undefined;
  }
  if (typeof value !== 'string' || value.length > max) throw invalid(`${name} must be a string of at most ${max} characters`);
  return value.trim();
}

function gender(value: unknown): Gender | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!GENDERS.includes(value as Gender)) throw invalid(`gender must be one of ${GENDERS.join(', ')}`);
  return value as Gender;
}

function language(value: unknown): string {
  const lang = text(value, 'language', 35, true)!;
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(lang)) throw invalid('language must be a language code such as en or en-US');
  return lang.toLowerCase();
}

function matches(voice: Voice, query: Record<string, unknown>, orgId: string | null): boolean {
  const q = typeof query.q === 'string' ? query.q.trim().toLowerCase() : '';
  if (q && !`${voice.name} ${voice.description} ${voice.id}`.toLowerCase().includes(q)) return false;
  if (query.gender !== undefined && voice.gender !== query.gender) return false;
  if (typeof query.language === 'string' && query.language) {
    const wanted = query.language.toLowerCase();
    if (voice.language !== wanted && !voice.language.startsWith(`${wanted}-`)) return false;
  }
  if (query.is_owner !== undefined) {
    const owned = voice.ownerOrgId !== null && voice.ownerOrgId === orgId;
    if (String(query.is_owner) !== String(owned)) return false;
  }
  return true;
}

/** The organisation's own stored voice; a built-in is not editable, another organisation's is not found. */
export async function ownVoice(services: Services, id: string, orgId: string | null): Promise<StoredVoice> {
  if (services.voices.isBuiltin(id)) throw new ApiError('voice_not_editable', { id });
  const stored = await services.store.voices.get(id);
  if (!stored || stored.orgId !== orgId) throw new ApiError('voice_not_found', { id });
  return stored;
}

async function readClone(request: FastifyRequest, maxBytes: number): Promise<{ clip: Buffer | null; fields: Record<string, string> }> {
  const fields: Record<string, string> = {};
  let clip: Buffer | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'clip' || clip) {
          await part.toBuffer();
          throw invalid(`unexpected file field ${part.fieldname}; send one file named clip`);
        }
        clip = await part.toBuffer();
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT') throw new ApiError('payload_too_large', { limit: maxBytes });
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') throw invalid('send multipart/form-data with a clip file, name and language');
    if (err instanceof ApiError) throw err;
    // The multipart parser's own failures (no boundary, a body cut short) are the client's malformed upload.
    throw invalid(`the multipart body could not be read: ${err instanceof Error ? err.message.slice(0, 200) : 'malformed'}`);
  }
  return { clip, fields };
}

/** A text field: absent, null or "" is none; else a string of at most `max` (code units); `required`: none is refused. */
function textField(name: string, max: number, required = false) {
  const tooLong = `${name} must be a string of at most ${max} characters`;
  const none = `${name} is required`;
  const value = z.string({ error: (issue) => (required && (issue.input === undefined || issue.input === null) ? none : tooLong) }).max(max, { error: tooLong });
  return required ? value.refine((text) => text !== '', { error: none }) : value.nullish();
}

const GENDER = `gender must be one of ${GENDERS.join(', ')}`;
const genderField = z
  .string({ error: GENDER })
  .refine((value) => value === '' || GENDERS.includes(value as Gender), { error: GENDER })
  .meta({ enum: [...GENDERS] })
  .nullish();

/** A body that is not an object: `invalid_json`, as always. */
const NOT_AN_OBJECT = { error: (issue: { input?: unknown }) => (issue.input === undefined || issue.input === null ? undefined : 'invalid_json') };

const patchBody = component(
  'VoicePatch',
  z
    .looseObject(
      {
        name: textField('name', 200),
        description: textField('description', 1000),
        gender: genderField,
        accent: textField('accent', 100),
        transcript: textField('transcript', MAX_TRANSCRIPT).describe("What the voice's clip says; null clears it."),
      },
      NOT_AN_OBJECT,
    )
    .describe('Only the fields sent change.'),
);

const mixBody = component(
  'VoiceMix',
  z
    .looseObject(
      {
        // Each part is checked whole by `voices/mix` (`checkMix`), with its own messages.
        voices: z
          .array(z.unknown(), { error: 'voices must be a list of {id, weight}' })
          .meta({ minItems: 1, items: { type: 'object', properties: { id: { type: 'string' }, weight: { type: 'number', minimum: 0, examples: [1] } }, required: ['id', 'weight'] } })
          .describe('The voices to mix and their weights: non-negative, at least one above 0; a weight of 0 leaves its voice out. At most `voices.maxMix` voices (4 by default), none of them a mix.'),
        name: textField('name', 200, true),
        description: textField('description', 1000),
      },
      { error: (issue) => (issue.input === undefined || issue.input === null ? 'voices must be a list of {id, weight}' : 'invalid_json') },
    )
    .describe('The body of `POST /voices/mix`.'),
);

const KEY_ERRORS = [401, 403, 429, 503];

/**
 * The parts of `POST /voices/clone`, for the document: the upload is read part by part
 * (`readClone`), which checks each part with the messages its tests name.
 */
const cloneParts = component(
  'VoiceClone',
  z
    .object({
      clip: z.string().meta({ format: 'binary' }).describe('A WAV or MP3 file of 1–120 s.'),
      name: z.string().max(200),
      language: z.string().max(35).describe('A language code such as en or en-US.'),
      description: z.string().max(1000).optional(),
      gender: z.enum(['feminine', 'masculine', 'gender_neutral']).optional(),
      accent: z.string().max(100).optional(),
      transcript: z
        .string()
        .max(5000)
        .optional()
        .describe('What the clip says, word for word. Engines that clone use it with the clip; ZipVoice models need it (without it: 409 `voice_transcript_missing`).'),
    })
    .describe('The multipart parts of `POST /voices/clone`.'),
);
const TAGS = ['Voices'];
const byId = z.object({ id: z.string().describe('The voice id (at most 256 characters).') });
const voice = (description: string) => ({ description, content: jsonContent('Voice') });
const LIST = {
  tags: TAGS,
  summary: 'List voices',
  description: 'The caller’s voices (newest first), then the built-in ones.',
  querystring: cursorQuerySchema.extend({
    q: z.unknown().optional().meta({ type: 'string' }).describe('Search in name and description.'),
    gender: z.unknown().optional().meta({ type: 'string', enum: [...GENDERS] }).describe('Only this gender.'),
    language: z.unknown().optional().meta({ type: 'string' }).describe('`fr` matches `fr` and `fr-fr`.'),
    is_owner: z.unknown().optional().meta({ type: 'string', enum: ['true', 'false'] }).describe('Only the caller’s own voices (or only the others).'),
  }),
  response: { 200: { description: 'A page of voices.', content: jsonContent('VoiceList') }, ...errorResponses('native', [400, ...KEY_ERRORS]) },
};
const GET = { tags: TAGS, summary: 'Get a voice', params: byId, response: { 200: voice('The voice.'), ...errorResponses('native', [400, 404, 414, ...KEY_ERRORS]) } };
const PATCH = { tags: TAGS, summary: 'Update an own voice', params: byId, body: patchBody.nullish(), response: { 200: voice('The voice.'), ...errorResponses('native', [400, 403, 404, 414, 415, ...KEY_ERRORS]) } };
const DELETE = { tags: TAGS, summary: 'Delete an own voice', params: byId, response: { 204: { description: 'Deleted.' }, ...errorResponses('native', [403, 404, 414, ...KEY_ERRORS]) } };
const MIX = {
  tags: TAGS,
  summary: 'Mix voices into a new voice',
  description:
    'Stores a mix of voices by weight, usable wherever a cloned voice is. Each engine mixes in its own way: Kokoro the weighted mean of the speakers’ style vectors, eSpeak NG the weighted mean of the voices’ pitch and rate; a model whose engine cannot mix answers 400 `voice_mix_unsupported` when the mix is spoken. The same mix can be named inline as a voice id: `af_bella(2)+af_sky(1)`.',
  body: mixBody,
  response: { 201: voice('The new voice, with its parts.'), ...errorResponses('native', [400, 404, 415, ...KEY_ERRORS]) },
};

/** Optional text as stored: trimmed, "" and null none. */
const trimmed = (value: string | null | undefined): string | undefined => (value === undefined || value === null || value === '' ? undefined : value.trim());

export function registerVoices(app: FastifyInstance, services: Services): void {
  const declared = <S>(schema: S, token = false) => ({ schema, attachValidation: true, config: { auth: 'key' as const, token } });
  /** The route schema's refusal (validated with `attachValidation`), answered once the caller is known. */
  const refuseInvalid = (request: FastifyRequest) => {
    if (request.validationError) throw request.validationError;
  };
  app.get<{ Querystring: Record<string, unknown> }>('/voices', declared(LIST, true), async (request) => {
    const caller = await authenticateRequest(services.gate, request, { token: 'read' });
    requireScope(caller, 'voices:read');
    const voices = (await services.voices.list(caller.orgId)).filter((v) => matches(v, request.query, caller.orgId));
    const page = pageByCursor(voices, request.query);
    return { data: page.data.map((v) => voiceToJson(v, caller.orgId)), has_more: page.has_more };
  });

  app.get<{ Params: { id: string } }>('/voices/:id', declared(GET, true), async (request) => {
    const caller = await authenticateRequest(services.gate, request, { token: 'read' });
    requireScope(caller, 'voices:read');
    refuseInvalid(request);
    const voice = await services.voices.get(request.params.id, caller.orgId);
    if (!voice) throw new ApiError('voice_not_found', { id: request.params.id });
    return voiceToJson(voice, caller.orgId);
  });

  app.patch<{ Params: { id: string } }>('/voices/:id', declared(PATCH), async (request) => {
    const caller = await authenticateRequest(services.gate, request);
    requireScope(caller, 'voices:write');
    await ownVoice(services, request.params.id, caller.orgId);
    refuseInvalid(request);
    const body = (request.body ?? {}) as z.infer<typeof patchBody>;
    const patch: VoicePatch = {};
    const name = trimmed(body.name);
    if (name !== undefined) patch.name = name;
    const description = trimmed(body.description);
    if (description !== undefined) patch.description = description;
    if (body.gender) patch.gender = body.gender as Gender;
    if (body.accent !== undefined) patch.accent = trimmed(body.accent) ?? null;
    if (body.transcript !== undefined) patch.transcript = trimmed(body.transcript) ?? null;
    const updated = await services.store.voices.update(request.params.id, patch);
    if (!updated) throw new ApiError('voice_not_found', { id: request.params.id });
    return voiceToJson((await services.voices.get(updated.id, caller.orgId))!, caller.orgId);
  });

  app.delete<{ Params: { id: string } }>('/voices/:id', declared(DELETE), async (request, reply) => {
    const caller = await authenticateRequest(services.gate, request);
    requireScope(caller, 'voices:write');
    refuseInvalid(request);
    await ownVoice(services, request.params.id, caller.orgId);
    await services.store.voices.delete(request.params.id);
    return reply.code(204).send();
  });

  // Cartesia's mix: {voices: [{id, weight}], name}. Checked whole (voices/mix) before anything is stored.
  app.post('/voices/mix', declared(MIX), async (request, reply) => {
    const caller = await authenticateRequest(services.gate, request);
    requireScope(caller, 'voices:write');
    if (!caller.orgId) throw new ApiError('missing_api_key');
    refuseInvalid(request);
    const body = request.body as z.infer<typeof mixBody>;
    const name = (body.name as string).trim();
    const description = trimmed(body.description) ?? '';
    const parts = checkMix(body.voices as MixPart[], services.voices.maxMix);
    const resolved = await services.voices.mixParts(parts, caller.orgId);
    const mixed = mixedVoice({ id: '', name, description, ownerOrgId: caller.orgId, createdAt: '' }, resolved);
    const stored = await services.store.voices.create(
      {
        id: `voice_${randomBytes(10).toString('hex')}`,
        orgId: caller.orgId,
        name,
        description,
        gender: mixed.gender,
        language: mixed.language,
        accent: null,
        transcript: null,
        clipSeconds: 0,
        createdAt: new Date().toISOString(),
      },
      Buffer.alloc(0),
    );
    // The parts are kept as the voice's `mix` profile: a mix has no clip, and no engine's profile until it is spoken.
    await services.store.voices.setProfile(stored.id, 'mix', parts);
    const voice = await services.voices.get(stored.id, caller.orgId);
    return reply.code(201).send(voiceToJson(voice!, caller.orgId));
  });

  const CLONE = {
    tags: ['Voices'],
    summary: 'Clone a voice from a clip',
    response: { 200: { description: 'The new voice.', content: jsonContent('Voice') }, ...errorResponses('native', [400, 413, 415, ...KEY_ERRORS]) },
  };
  app.register(async (scope) => {
    const { maxClipBytes, clipSampleRate } = services.config.voices;
    await scope.register(multipart, { limits: { fileSize: maxClipBytes, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
    scope.post('/voices/clone', { schema: CLONE, config: { auth: 'key', multipart: cloneParts } }, async (request) => {
      const caller = await authenticateRequest(services.gate, request);
      requireScope(caller, 'voices:write');
      if (!caller.orgId) throw new ApiError('missing_api_key');
      const { clip, fields } = await readClone(request, maxClipBytes);
      const name = text(fields.name, 'name', 200, true)!;
      const lang = language(fields.language);
      const description = text(fields.description, 'description', 1000, false) ?? '';
      const transcript = text(fields.transcript, 'transcript', MAX_TRANSCRIPT, false) ?? null;
      const g = gender(fields.gender) ?? 'gender_neutral';
      const accent = text(fields.accent, 'accent', 100, false) ?? null;
      if (!clip || clip.length === 0) throw invalid('clip is required: a WAV or MP3 file of 1–120 seconds');
      const prepared = await prepareClip(clip, clipSampleRate);
      const stored = await services.store.voices.create(
        {
          id: `voice_${randomBytes(10).toString('hex')}`,
          orgId: caller.orgId,
          name,
          description,
          gender: g,
          language: lang,
          accent,
          transcript,
          clipSeconds: Math.round(prepared.seconds * 100) / 100,
          createdAt: new Date().toISOString(),
        },
        prepared.wav,
      );
      request.log.info({ voice: stored.id, seconds: prepared.seconds }, 'voice cloned');
      return voiceToJson((await services.voices.get(stored.id, caller.orgId))!, caller.orgId);
    });
  });
}
