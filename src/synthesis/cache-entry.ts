/**
 * @module synthesis/cache-entry
 * Which audio-cache entry a resolved request answers to (`cache/key.ts`):
 * none when the server has no cache, the model or the client turned it off,
 * the engine is not running, or the request holds SSML marks (an entry keeps
 * audio and word timestamps, not the marks' events); otherwise the entry id made of the scope
 * (the organisation, or `shared` for a built-in voice when sharing is on —
 * never for a cloned voice), the voice, and the key over everything that
 * decides the audio. A voice's revision is kept per voice record (a record
 * is never changed in place: an edited or reloaded voice is a new object),
 * so a built-in voice's is worked out once, not on every request.
 */
import { entryId } from '../cache/audio-cache.js';
import { audioCacheKey, voiceRevision, type KeySegment } from '../cache/key.js';
import { LOCAL_ORG_ID } from './gate.js';
import type { SynthesisRequest } from './request.js';
import type { SynthesisServices } from './services.js';
import type { Voice } from '../voices/voice.js';

/** Revisions by voice record, then by clip digest and gain (a voice has one gain per engine). */
const revisions = new WeakMap<Voice, Map<string, string>>();

function revisionOf(voice: Voice, clipDigest: string | null, gain: number): string {
  let known = revisions.get(voice);
  if (!known) revisions.set(voice, (known = new Map()));
  const at = `${clipDigest ?? ''} ${gain}`;
  let revision = known.get(at);
  if (revision === undefined) known.set(at, (revision = voiceRevision(voice, clipDigest, gain)));
  return revision;
}

export function cacheEntryOf(request: SynthesisRequest, orgId: string | null, services: SynthesisServices): string | null {
  const cache = services.cache;
  if (!cache || request.model.cache === false) return null;
  if (request.segments.some((segment) => segment.kind === 'mark')) return null;
  const fingerprint = services.engines.fingerprint(request.engine.id);
  if (!fingerprint) return null;
  const { voice, speakers } = request;
  // A dialogue is shared only when every voice in it is a built-in one.
  const builtIn = voice.ownerOrgId === null && (speakers ?? []).every((speaker) => speaker.voice.ownerOrgId === null);
  const scope = cache.shareAcrossOrganisations && builtIn ? 'shared' : (orgId ?? LOCAL_ORG_ID);
  const key = audioCacheKey({
    scope,
    engine: { id: request.engine.id, fingerprint: `${cache.version} ${fingerprint}` },
    voice: { id: voice.id, revision: revisionOf(voice, request.reference?.digest ?? null, request.voiceGain) },
    ...(speakers ? { speakers: speakers.map((s) => ({ id: s.voice.id, revision: revisionOf(s.voice, s.reference?.digest ?? null, s.gain) })) } : {}),
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
