import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AudioCache } from '../cache/audio-cache.js';
import type { Voice } from '../voices/voice.js';
import { cacheEntryOf } from './cache-entry.js';
import type { SynthesisRequest } from './request.js';
import type { SynthesisServices } from './services.js';

const builtin: Voice = { id: 'sarah', name: 'Sarah', description: '', gender: 'feminine', language: 'en', accent: null, ownerOrgId: null, createdAt: '2025-01-01T00:00:00Z', profiles: { espeak: { voice: 'en-us', variant: 'f2', pitch: 55, rate: 170 } } };
const cloned: Voice = { ...builtin, id: 'voice_1', ownerOrgId: 'org_a', profiles: { zipvoice: {} }, clipSeconds: 8, transcript: 'what the clip says' };

function services(options: { share?: boolean; fingerprint?: string | null } = {}): SynthesisServices {
  return {
    engines: { fingerprint: () => (options.fingerprint === undefined ? 'fp-1' : options.fingerprint) },
    cache: { store: new AudioCache({ memoryBytes: 0, diskBytes: 0, maxEntryBytes: 1024, blobs: null }), billHits: true, shareAcrossOrganisations: options.share ?? false, version: '0.1.0' },
  } as unknown as SynthesisServices;
}

function request(change: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return {
    requestId: 'r1',
    model: { id: 'gepard-1.0' },
    engine: { id: 'espeak', type: 'espeak' },
    transcript: 'Hello.',
    characters: 6,
    segments: [{ kind: 'text', text: 'Hello.', speed: 1, gain: 1.1 }],
    voiceGain: 1.1,
    pronunciation: null,
    voice: builtin,
    reference: null,
    format: { container: 'raw', encoding: 'pcm_s16le', sampleRate: 22050 },
    language: null,
    settings: { speed: 1, volume: 1 },
    streaming: true,
    wordTimestamps: false,
    contextId: null,
    ...change,
  } as unknown as SynthesisRequest;
}

test('entries are per organisation; with sharing on a built-in voice is shared, a cloned voice never', () => {
  const own = services();
  assert.notEqual(cacheEntryOf(request(), 'org_a', own), cacheEntryOf(request(), 'org_b', own));
  const shared = services({ share: true });
  assert.equal(cacheEntryOf(request(), 'org_a', shared), cacheEntryOf(request(), 'org_b', shared));
  assert.match(cacheEntryOf(request(), 'org_a', shared)!, /^audio\/c2hhcmVk\//, 'the shared scope');
  const voice = request({ voice: cloned });
  assert.notEqual(cacheEntryOf(voice, 'org_a', shared), cacheEntryOf(voice, 'org_b', shared));
  assert.doesNotMatch(cacheEntryOf(voice, 'org_a', shared)!, /^audio\/c2hhcmVk\//);
});

test("a voice's profile, clip, transcript or gain, the engine's fingerprint or the server's version each change the entry", () => {
  const base = cacheEntryOf(request({ voice: cloned }), 'org_a', services());
  const reference = { audio: new Float32Array(1), sampleRate: 24000 };
  const changed = [
    cacheEntryOf(request({ voice: { ...cloned, profiles: { zipvoice: { v: 2 } } } }), 'org_a', services()),
    cacheEntryOf(request({ voice: cloned, reference: { ...reference, digest: 'a'.repeat(64) } }), 'org_a', services()),
    cacheEntryOf(request({ voice: cloned, reference: { ...reference, digest: 'b'.repeat(64) } }), 'org_a', services()),
    cacheEntryOf(request({ voice: { ...cloned, transcript: 'another clip text' } }), 'org_a', services()),
    cacheEntryOf(request({ voice: cloned, voiceGain: 1.2 }), 'org_a', services()),
    cacheEntryOf(request({ voice: cloned }), 'org_a', services({ fingerprint: 'fp-2' })),
  ];
  const svc = services();
  svc.cache!.version = '0.2.0';
  changed.push(cacheEntryOf(request({ voice: cloned }), 'org_a', svc));
  assert.equal(new Set([base, ...changed]).size, changed.length + 1);
});

test('no entry without a cache, for a model with cache: false, or for an engine that is not running', () => {
  assert.equal(cacheEntryOf(request(), 'org_a', { ...services(), cache: null }), null);
  assert.equal(cacheEntryOf(request({ model: { id: 'm', cache: false } as SynthesisRequest['model'] }), 'org_a', services()), null);
  assert.equal(cacheEntryOf(request(), 'org_a', services({ fingerprint: null })), null);
});

test("SSML's phonemes and language each change the entry: the same text spoken otherwise is other audio", () => {
  const text = { kind: 'text', text: 'I say tomato.', speed: 1, gain: 1.1 } as const;
  const entry = (segment: Record<string, unknown>) => cacheEntryOf(request({ segments: [{ ...text, ...segment }] as SynthesisRequest['segments'] }), 'org_a', services());
  const plain = entry({});
  const entries = [
    entry({ phonemes: [{ from: 6, to: 12, ipa: 'təˈmeɪtoʊ' }] }),
    entry({ phonemes: [{ from: 6, to: 12, ipa: 'təˈmɑːtoʊ' }] }),
    entry({ phonemes: [{ from: 6, to: 13, ipa: 'təˈmɑːtoʊ' }] }),
    entry({ language: 'fr-fr' }),
    entry({ language: 'de' }),
  ];
  assert.equal(new Set([plain, ...entries]).size, entries.length + 1);
  // Equal segments find the same entry; a segment without them is the one it always was.
  assert.equal(entry({ language: 'de' }), entries[4]);
  assert.equal(entry({ phonemes: undefined, language: undefined }), plain);
});
