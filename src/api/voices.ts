/**
 * @module api/voices
 * `GET /voices` and `GET /voices/{id}` in the Cartesia voice shape, listing
 * what the calling organisation can use.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { Services } from '../services.js';
import type { Voice } from '../voices/voice.js';

export function voiceToJson(voice: Voice, orgId: string | null) {
  return {
    id: voice.id,
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
    engines: Object.keys(voice.profiles),
  };
}

export function registerVoices(app: FastifyInstance, services: Services): void {
  app.get('/voices', async (request) => {
    const caller = await services.gate.authenticate(request);
    const voices = await services.voices.list(caller.orgId);
    return { data: voices.map((v) => voiceToJson(v, caller.orgId)), has_more: false };
  });
  app.get<{ Params: { id: string } }>('/voices/:id', async (request) => {
    const caller = await services.gate.authenticate(request);
    const voice = await services.voices.get(request.params.id, caller.orgId);
    if (!voice) throw new ApiError('voice_not_found', { id: request.params.id });
    return voiceToJson(voice, caller.orgId);
  });
}
