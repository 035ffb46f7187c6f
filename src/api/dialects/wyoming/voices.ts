/**
 * @module api/wyoming/voices
 * The voices the Wyoming listener offers: every voice its key may use on the
 * offered models, each under one unique name — the voice id on the first
 * model that speaks it, `<model id>/<voice id>` on the others — with its
 * languages as BCP-47 tags. `synthesize` names a voice by that name, or by a
 * language (the best voice of it), or by neither (the default voice).
 */
import { ApiError } from '../../../errors/api-error.js';
import type { Engine } from '../../../engines/engine.js';
import type { ModelProfile } from '../../../models/profile.js';
import type { Services } from '../../../services.js';
import type { Caller } from '../../../synthesis/gate.js';
import { storedMix } from '../../../voices/catalogue.js';
import { hasClip, type Voice } from '../../../voices/voice.js';

export interface OfferedVoice {
  /** The name `info` lists and `synthesize` takes. */
  name: string;
  model: ModelProfile;
  voice: Voice;
  /** BCP-47, with hyphens (`en-US`). */
  language: string;
}

/** A language tag as BCP-47 writes it: `en_us` → `en-US`, `zh-hant-tw` → `zh-Hant-TW`, `en-gb-x-rp` → `en-GB-x-rp`. */
export function bcp47(tag: string): string {
  const parts = tag.trim().split(/[-_]/).filter(Boolean);
  let private_ = false;
  return parts
    .map((part, i) => {
      if (i === 0 || private_) return part.toLowerCase();
      if (part.toLowerCase() === 'x') {
        private_ = true;
        return 'x';
      }
      if (/^[a-z]{2}$/i.test(part) || /^\d{3}$/.test(part)) return part.toUpperCase();
      if (/^[a-z]{4}$/i.test(part)) return part[0].toUpperCase() + part.slice(1).toLowerCase();
      return part.toLowerCase();
    })
    .join('-');
}

/** Whether `engine` speaks `voice` as resolving would accept it. */
function speaks(engine: Engine, voice: Voice): boolean {
  if (voice.mix) return !!engine.mixProfiles && voice.mix.every((part) => engine.supportsVoice(part.voice));
  if (!engine.supportsVoice(voice)) return false;
  if (engine.cloning?.requiresTranscript && hasClip(voice) && !voice.transcript?.trim()) return false;
  return true;
}

/** The models offered: `wyoming.models` in its order (those configured), else every model. */
export function offeredModels(services: Services): ModelProfile[] {
  const names = services.config.wyoming.models;
  if (!names) return services.models.list();
  return names.map((id) => services.models.get(id)).filter((m): m is ModelProfile => m !== undefined);
}

/**
 * Every voice the caller may use on the offered models, in order: each model's voices (the
 * organisation's own, then the built-in ones), models in their order. A key limited to some
 * models is offered only those.
 */
export async function offeredVoices(services: Services, caller: Caller): Promise<OfferedVoice[]> {
  const models = await allowedModels(services, caller);
  // A stored mix is listed without its parts: it is looked up whole, as resolving it would be.
  const listed = await services.voices.list(caller.orgId);
  const voices = (await Promise.all(listed.map((v) => (storedMix(v) ? services.voices.get(v.id, caller.orgId) : v)))).filter((v): v is Voice => v !== null);
  const named = new Set<string>();
  const offered: OfferedVoice[] = [];
  for (const model of models) {
    const engine = services.engines.get(model.engine);
    if (!engine) continue;
    for (const voice of voices) {
      if (!speaks(engine, voice)) continue;
      const name = named.has(voice.id) ? `${model.id}/${voice.id}` : voice.id;
      named.add(voice.id);
      offered.push({ name, model, voice, language: bcp47(voice.language) });
    }
  }
  return offered;
}

/** How long a key's model list is kept for naming voices (its admission checks the list as it stands). */
const KEY_MODELS_TTL_MS = 500;
const keyModels = new WeakMap<Services, Map<string, { at: number; models: readonly string[] | null }>>();

/** The offered models the caller's key may use (read from the store at most every 500 ms per key). */
async function allowedModels(services: Services, caller: Caller): Promise<ModelProfile[]> {
  const models = offeredModels(services);
  if (!caller.keyId || !services.accounts) return models;
  let cache = keyModels.get(services);
  if (!cache) keyModels.set(services, (cache = new Map()));
  const now = performance.now();
  let entry = cache.get(caller.keyId);
  if (!entry || now - entry.at > KEY_MODELS_TTL_MS) {
    const key = await services.accounts.store.keys.get(caller.keyId);
    entry = { at: now, models: key?.models ?? null };
    if (cache.size > 1000) cache.clear();
    cache.set(caller.keyId, entry);
  }
  const allowed = entry.models;
  return allowed ? models.filter((m) => allowed.includes(m.id)) : models;
}

/**
 * The voice a `synthesize` asks for, as `chooseVoice` would pick it from `offeredVoices`, but
 * looking up only the voice named (or the default) rather than listing every voice: a request
 * pays for one lookup. A language alone is chosen from the whole list.
 */
export async function resolveVoice(services: Services, caller: Caller, choice: VoiceChoice): Promise<OfferedVoice> {
  if (!choice.name && choice.language) return chooseVoice(await offeredVoices(services, caller), choice);
  const models = await allowedModels(services, caller);
  const spoken = (model: ModelProfile, voice: Voice) => {
    const engine = services.engines.get(model.engine);
    return engine !== undefined && speaks(engine, voice);
  };
  const offer = (model: ModelProfile, voice: Voice, name: string): OfferedVoice => ({ name, model, voice, language: bcp47(voice.language) });
  const name = choice.name;
  if (name) {
    const slash = name.indexOf('/');
    const onModel = slash > 0 ? models.find((m) => m.id === name.slice(0, slash)) : undefined;
    if (onModel) {
      // `<model id>/<voice id>` names the voice on a model other than the first that speaks it.
      const voice = await services.voices.get(name.slice(slash + 1), caller.orgId);
      if (voice && spoken(onModel, voice) && models.find((m) => spoken(m, voice)) !== onModel) return offer(onModel, voice, name);
    }
    const voice = await services.voices.get(name, caller.orgId);
    const model = voice ? models.find((m) => spoken(m, voice)) : undefined;
    if (!voice || !model || voice.id !== name) throw new ApiError('voice_not_found', { id: name });
    return offer(model, voice, name);
  }
  const id = models[0]?.defaultVoice ?? models.find((m) => m.defaultVoice)?.defaultVoice;
  const voice = id ? await services.voices.get(id, caller.orgId) : null;
  const model = voice ? models.find((m) => spoken(m, voice)) : undefined;
  if (voice && model) return offer(model, voice, voice.id);
  return chooseVoice(await offeredVoices(services, caller), {});
}

export interface VoiceChoice {
  name?: string;
  language?: string;
}

const primary = (tag: string) => tag.split('-')[0];

/**
 * The voice a `synthesize` asks for: by name (overrides language, as the protocol says), else the
 * best voice of the language (a voice of exactly that tag, the default voice first, else the
 * default voice when it speaks the language, else any voice of the language's primary subtag; built-in voices before the organisation's), else the
 * default: the first offered model's default voice (or the first that has one), else the first voice.
 */
export function chooseVoice(offered: readonly OfferedVoice[], choice: VoiceChoice): OfferedVoice {
  if (choice.name) {
    const found = offered.find((v) => v.name === choice.name);
    if (!found) throw new ApiError('voice_not_found', { id: choice.name });
    return found;
  }
  const fallback = defaultVoice(offered);
  if (choice.language) {
    const wanted = bcp47(choice.language);
    if (fallback && fallback.language.toLowerCase() === wanted.toLowerCase()) return fallback;
    const builtinFirst = [...offered.filter((v) => v.voice.ownerOrgId === null), ...offered.filter((v) => v.voice.ownerOrgId !== null)];
    const found =
      builtinFirst.find((v) => v.language.toLowerCase() === wanted.toLowerCase()) ??
      (fallback && primary(fallback.language) === primary(wanted) ? fallback : undefined) ??
      builtinFirst.find((v) => primary(v.language) === primary(wanted));
    if (!found) throw new ApiError('voice_not_found', { id: `(language ${wanted})` });
    return found;
  }
  if (!fallback) throw new ApiError('voice_not_found', { id: '(default)' });
  return fallback;
}

function defaultVoice(offered: readonly OfferedVoice[]): OfferedVoice | undefined {
  const first = offered[0]?.model;
  const models = [...new Set(offered.map((v) => v.model))];
  const id = first?.defaultVoice ?? models.find((m) => m.defaultVoice)?.defaultVoice;
  return (id ? offered.find((v) => v.voice.id === id) : undefined) ?? offered[0];
}
