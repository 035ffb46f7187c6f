/**
 * @module synthesis/cache-entry
 * Which audio-cache entry a resolved request answers to (`cache/key.ts`):
 * none when the server has no cache, the model or the client turned it off,
 * the engine is not running, or the request holds SSML marks (an entry keeps
 * audio and word timestamps, not the marks' events); otherwise the entry id made of the scope
 * (the organisation, or `shared` for a built-in voice when sharing is on —
 * never for a cloned voice), the voice, and the key over everything that
 * decides the audio.
 */
import { entryId } from '../cache/audio-cache.js';
import { audioCacheKey, voiceRevision, type KeySegment } from '../cache/key.js';
import { LOCAL_ORG_ID } from './gate.js';
import type { SynthesisRequest } from './request.js';
import type { SynthesisServices } from './services.js';

export function cacheEntryOf(request: SynthesisRequest, orgId: string | null, services: SynthesisServices): string | null {
  const cache = services.cache;
  if (!cache || request.model.cache === false) return null;
  if (request.segments.some((segment) => segment.kind === 'mark')) return null;
  const fingerprint = services.engines.fingerprint(request.engine.id);
  if (!fingerprint) return null;
  const { voice } = request;
  const scope = cache.shareAcrossOrganisations && voice.ownerOrgId === null ? 'shared' : (orgId ?? LOCAL_ORG_ID);
  const key = audioCacheKey({
    scope,
    engine: { id: request.engine.id, fingerprint: `${cache.version} ${fingerprint}` },
    voice: { id: voice.id, revision: voiceRevision(voice, request.reference?.digest ?? null, request.voiceGain) },
    transcript: request.transcript,
    segments: request.segments as readonly KeySegment[],
    pronunciation: request.pronunciation,
    language: request.language,
    speed: request.settings.speed,
    volume: request.settings.volume,
    format: request.format,
    streaming: request.streaming,
    timestamps: request.wordTimestamps,
  });
  return entryId(scope, voice.id, key);
}
