/**
 * @module api/deepgram/models
 * `GET /v1/models` in Deepgram's shape, `{"stt": [], "tts": [...]}`: every
 * Aura name of the `deepgram.models` table, then `aura-2-<voice_id>-<lang>`
 * for every voice the caller sees, each as Deepgram lists a TTS model
 * (`name`, `canonical_name`, `architecture`, `languages`, `version`, `uuid`,
 * `metadata`). ElevenLabs answers the same path: the routes' assembly sends
 * a request here when its credential is `Authorization: Token …`.
 */
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import type { Services } from '../../../services.js';
import type { Voice } from '../../../voices/voice.js';
import { deepgramKey, modelUuid } from './speech.js';

function entry(canonical: string, voice: Voice | undefined, language: string) {
  const aura2 = canonical.startsWith('aura-2-');
  const name = canonical.slice(aura2 ? 'aura-2-'.length : 'aura-'.length, canonical.length - language.length - 1);
  return {
    name,
    canonical_name: canonical,
    architecture: aura2 ? 'aura-2' : 'aura',
    languages: [language],
    version: '1.0',
    uuid: modelUuid(canonical),
    metadata: { accent: voice?.accent ?? null, tags: voice ? [voice.gender] : [], voice_id: voice?.id ?? null },
  };
}

/** `route`: the options that make this route answer only Deepgram's callers (the assembly's constraint). */
export function registerDeepgramModels(app: FastifyInstance, services: Services, route: RouteShorthandOptions): void {
  app.get('/v1/models', route, async (request) => {
    const { orgId } = await services.gate.authenticate(deepgramKey(request.headers), { token: 'read', address: request.ip });
    const tts = [];
    for (const [canonical, mapped] of Object.entries(services.config.deepgram.models)) {
      const language = canonical.slice(canonical.lastIndexOf('-') + 1);
      tts.push(entry(canonical, services.voices.builtinVoice(mapped.voice), language));
    }
    for (const voice of await services.voices.list(orgId)) {
      const language = voice.language.split('-')[0];
      tts.push(entry(`aura-2-${voice.id}-${language}`, voice, language));
    }
    return { stt: [], tts };
  });
}
