/**
 * @module api/elevenlabs/listings
 * What ElevenLabs' clients read besides speech: `GET /v1/voices` (built-in
 * and the organisation's cloned voices as `{voices: [{voice_id, name,
 * category, labels, preview_url, …}]}`, and `/v2/voices`, the SDK's search, as
 * one page), `GET /v1/voices/{voice_id}`,
 * `GET /v1/models` (the ElevenLabs model ids the aliases map, then the models
 * themselves, each only when its model serves every ElevenLabs output format,
 * whole and streamed, with its limit), and `GET /v1/user/subscription`: the organisation's
 * ledger in ElevenLabs' shape, every field the official SDK's `Subscription`
 * type requires. `character_count` is what has been charged, and
 * `character_limit − character_count` is the balance.
 */
import { z } from 'zod';
import { errorResponses, jsonContent } from '../../../http/route-schema.js';
import { voicePathSchema } from './schema.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireScope, type Scope } from '../../../accounts/scopes.js';
import { ApiError } from '../../../errors/api-error.js';
import { formatsServed } from '../../../models/output-format.js';
import type { ModelProfile } from '../../../models/profile.js';
import type { Services } from '../../../services.js';
import type { Voice } from '../../../voices/voice.js';
import { ELEVENLABS_OUTPUT_FORMATS } from './parse.js';
import { elevenLabsKey } from './speech.js';

/** ElevenLabs' languages list for a model's language codes. */
const LANGUAGE_NAMES: Record<string, string> = { en: 'English', de: 'German', fr: 'French', es: 'Spanish', it: 'Italian', pt: 'Portuguese', nl: 'Dutch', zh: 'Chinese', ja: 'Japanese' };

function voiceJson(voice: Voice) {
  const cloned = voice.ownerOrgId !== null;
  return {
    voice_id: voice.id,
    name: voice.name,
    category: cloned ? 'cloned' : 'premade',
    description: voice.description,
    labels: { gender: voice.gender === 'feminine' ? 'female' : voice.gender === 'masculine' ? 'male' : 'neutral', accent: voice.accent ?? '', language: voice.language },
    preview_url: null,
    settings: null,
    available_for_tiers: [],
    high_quality_base_model_ids: [],
    verified_languages: [{ language: voice.language, model_id: 'voicegate-1.0', accent: voice.accent ?? null }],
    is_owner: cloned,
    created_at_unix: Math.floor(Date.parse(voice.createdAt) / 1000),
  };
}

function modelJson(id: string, model: ModelProfile, name = model.name) {
  return {
    model_id: id,
    name,
    description: model.description,
    can_be_finetuned: false,
    can_do_text_to_speech: true,
    can_do_voice_conversion: false,
    can_use_style: false,
    can_use_speaker_boost: false,
    serves_pro_voices: false,
    token_cost_factor: model.creditMultiplier,
    requires_alpha_access: false,
    max_characters_request_free_user: model.maxTranscriptChars,
    max_characters_request_subscribed_user: model.maxTranscriptChars,
    maximum_text_length_per_request: model.maxTranscriptChars,
    languages: model.languages.map((code) => ({ language_id: code, name: LANGUAGE_NAMES[code] ?? code })),
    model_rates: { character_cost_multiplier: model.creditMultiplier },
    concurrency_group: 'standard',
  };
}

const KEY_ERRORS = errorResponses('elevenlabs', [401, 403, 429, 503]);
const KEY = { auth: 'key' as const, token: true, credentials: ['xiApiKey'] };

/** A listing's schema: ElevenLabs' tag, its answer by component name, the errors of a key. */
function listing(summary: string, description: string, component: string, more: Record<string, unknown> = {}, errors = KEY_ERRORS) {
  return { tags: ['ElevenLabs'], summary, ...more, response: { 200: { description, content: jsonContent(component) }, ...errors } };
}

const search = z.looseObject({ search: z.string().optional().describe('Words in the name, description or id.') });

export function registerElevenLabsListings(app: FastifyInstance, services: Services): void {
  /** The caller of a listing (an access token will do), holding `scope` when one is named. */
  const caller = async (request: FastifyRequest, scope?: Scope) => {
    const who = await services.gate.authenticate(elevenLabsKey(request.headers), { token: 'read', address: request.ip });
    if (scope) requireScope(who, scope);
    return who;
  };

  // v1 lists them all; v2 (the SDK's `voices.search`) the same, as one page.
  for (const [path, summary, description] of [
    ['/v1/voices', 'List voices (ElevenLabs-compatible)', 'Every voice the caller sees.'],
    ['/v2/voices', 'Search voices (ElevenLabs-compatible)', 'The voices that match, as one page.'],
  ]) {
    const schema = listing(summary, description, 'ElevenLabsVoiceList', { querystring: search });
    app.get<{ Querystring: Record<string, string> }>(path, { schema, config: KEY }, async (request) => {
      const { orgId } = await caller(request, 'voices:read');
      const search = (request.query.search ?? '').trim().toLowerCase();
      const voices = (await services.voices.list(orgId)).filter((v) => !search || `${v.name} ${v.description} ${v.id}`.toLowerCase().includes(search));
      return { voices: voices.map(voiceJson), has_more: false, total_count: voices.length };
    });
  }

  const one = listing('Get a voice (ElevenLabs-compatible)', 'The voice.', 'ElevenLabsVoice', { params: voicePathSchema }, { ...KEY_ERRORS, ...errorResponses('elevenlabs', [404]) });
  app.get<{ Params: { voice_id: string } }>('/v1/voices/:voice_id', { schema: one, config: KEY }, async (request) => {
    const { orgId } = await caller(request, 'voices:read');
    const id = services.config.elevenlabs.voiceAliases[request.params.voice_id] ?? request.params.voice_id;
    const voice = await services.voices.get(id, orgId);
    if (!voice) throw new ApiError('voice_not_found', { id: request.params.voice_id });
    return voiceJson(voice);
  });

  // An ElevenLabs client takes a listed model and asks for any of ElevenLabs' formats (MP3 by
  // default): only a model that serves them all, whole and streamed, is listed, the ElevenLabs ids
  // first. Another model still answers by its id, in the formats it serves (docs/api.md).
  const models = listing('List models (ElevenLabs-compatible)', 'Every model, and every ElevenLabs model id an alias maps.', 'ElevenLabsModelList', {
    description:
      'With `Authorization: Token <key>` (Deepgram’s clients), Deepgram’s listing instead: `{"stt": [], "tts": [{name, canonical_name, architecture, languages, version, uuid, metadata}]}`, every Aura name of `deepgram.models` and `aura-2-<voice_id>-<lang>` for every voice the caller sees, with errors in Deepgram’s shape.',
  });
  app.get('/v1/models', { schema: models, config: { ...KEY, credentials: ['xiApiKey', 'deepgramToken'] } }, async (request) => {
    await caller(request);
    const every = Object.keys(ELEVENLABS_OUTPUT_FORMATS).length;
    const servesEvery = (model: ModelProfile) =>
      model.streaming && [false, true].every((streaming) => formatsServed(ELEVENLABS_OUTPUT_FORMATS, model, streaming).length === every);
    const models = [];
    for (const [alias, target] of Object.entries(services.config.elevenlabs.modelAliases)) {
      const model = services.models.get(target);
      if (model && !services.models.get(alias) && servesEvery(model)) models.push(modelJson(alias, model, `${alias} (served by ${model.id})`));
    }
    for (const model of services.models.list()) if (servesEvery(model)) models.push(modelJson(model.id, model));
    return models;
  });

  // The balance and what was charged: usage.
  const usage = listing('The organisation’s usage (ElevenLabs-compatible)', '`character_count` charged; `character_limit − character_count` is the balance.', 'ElevenLabsSubscription');
  app.get('/v1/user/subscription', { schema: usage, config: KEY }, async (request) => {
    const { orgId } = await caller(request, 'usage:read');
    return subscription(services, orgId);
  });
}

/** The organisation's balance and what it has been charged, in ElevenLabs' `Subscription` shape. */
async function subscription(services: Services, orgId: string | null) {
  const accounts = services.accounts;
  let count = 0;
  let limit = 0;
  let voices = 0;
  if (accounts && orgId) {
    const [org, charged, own] = await Promise.all([accounts.admin.getOrg(orgId), services.store.ledger.charged(orgId), services.store.voices.list(orgId)]);
    count = charged.credits;
    limit = org.balance + charged.credits;
    voices = own.length;
  }
  return {
    tier: accounts ? 'voicegate' : 'unlimited',
    character_count: count,
    character_limit: accounts ? limit : 1_000_000_000,
    max_character_limit_extension: 0,
    max_credit_limit_extension: 0,
    can_extend_character_limit: false,
    allowed_to_extend_character_limit: false,
    voice_slots_used: voices,
    professional_voice_slots_used: 0,
    professional_voice_slots_used_in_workspace: 0,
    voice_limit: 1000,
    max_voice_add_edits: 1000,
    voice_add_edit_counter: 0,
    professional_voice_limit: 0,
    can_extend_voice_limit: false,
    can_use_instant_voice_cloning: true,
    can_use_professional_voice_cloning: false,
    currency: 'usd',
    status: 'active',
    billing_period: 'monthly_period',
    character_refresh_period: 'monthly_period',
    current_overage: { amount: '0', currency: 'usd' },
    open_invoices: [],
    has_open_invoices: false,
  };
}
