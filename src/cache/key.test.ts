import assert from 'node:assert/strict';
import { test } from 'node:test';
import { audioCacheKey, canonicalJson, voiceRevision, type CacheKeyIngredients } from './key.js';

const voice = { id: 'jordan', ownerOrgId: null, language: 'en', createdAt: '2025-01-01T00:00:00Z', profiles: { espeak: { voice: 'en-us', variant: 'm3', pitch: 50, rate: 175 } } };

const base: CacheKeyIngredients = {
  scope: 'org_a',
  engine: { id: 'espeak', fingerprint: 'v1 abc' },
  voice: { id: 'jordan', revision: voiceRevision(voice, null, 1.2) },
  transcript: 'Hello there.',
  segments: [{ kind: 'text', text: 'Hello there.', speed: 1, gain: 1.2 }, { kind: 'silence', seconds: 0.5 }],
  pronunciation: null,
  language: null,
  speed: 1,
  volume: 1,
  format: { container: 'raw', encoding: 'pcm_s16le', sampleRate: 22050 },
  streaming: true,
  timestamps: false,
};

test('the key is 64 hex digits and the same for equal ingredients, whatever the order of their fields', () => {
  const key = audioCacheKey(base);
  assert.match(key, /^[0-9a-f]{64}$/);
  const reordered = Object.fromEntries(Object.entries(base).reverse()) as unknown as CacheKeyIngredients;
  assert.equal(audioCacheKey(reordered), key);
  assert.equal(audioCacheKey({ ...base, format: { sampleRate: 22050, encoding: 'pcm_s16le', container: 'raw' } }), key);
});

test('each ingredient changes the key', () => {
  const key = audioCacheKey(base);
  const variants: [string, Partial<CacheKeyIngredients>][] = [
    ['scope', { scope: 'org_b' }],
    ['engine id', { engine: { id: 'espeak2', fingerprint: 'v1 abc' } }],
    ['engine fingerprint', { engine: { id: 'espeak', fingerprint: 'v1 abd' } }],
    ['voice id', { voice: { id: 'emma', revision: base.voice.revision } }],
    ['voice profile', { voice: { id: 'jordan', revision: voiceRevision({ ...voice, profiles: { espeak: { ...voice.profiles.espeak, pitch: 51 } } }, null, 1.2) } }],
    ['voice clip', { voice: { id: 'jordan', revision: voiceRevision(voice, 'a'.repeat(64), 1.2) } }],
    ['voice gain', { voice: { id: 'jordan', revision: voiceRevision(voice, null, 1.25) } }],
    ['voice transcript', { voice: { id: 'jordan', revision: voiceRevision({ ...voice, transcript: 'what the clip says' } as typeof voice, null, 1.2) } }],
    ['transcript', { transcript: 'Hello there!' }],
    ['segment text', { segments: [{ kind: 'text', text: 'Hello their.', speed: 1, gain: 1.2 }, { kind: 'silence', seconds: 0.5 }] }],
    ['segment speed', { segments: [{ kind: 'text', text: 'Hello there.', speed: 1.1, gain: 1.2 }, { kind: 'silence', seconds: 0.5 }] }],
    ['segment gain', { segments: [{ kind: 'text', text: 'Hello there.', speed: 1, gain: 1.3 }, { kind: 'silence', seconds: 0.5 }] }],
    ['silence', { segments: [{ kind: 'text', text: 'Hello there.', speed: 1, gain: 1.2 }, { kind: 'silence', seconds: 0.6 }] }],
    ['segment order', { segments: [{ kind: 'silence', seconds: 0.5 }, { kind: 'text', text: 'Hello there.', speed: 1, gain: 1.2 }] }],
    ['dictionary', { pronunciation: [{ text: 'there', alias: 'thair' }] }],
    ['dictionary case', { pronunciation: [{ text: 'there', alias: 'thair', case_sensitive: true }] }],
    ['language', { language: 'en' }],
    ['speed', { speed: 1.5 }],
    ['volume', { volume: 0.5 }],
    ['container', { format: { ...base.format, container: 'wav' } }],
    ['encoding', { format: { ...base.format, encoding: 'pcm_f32le' } }],
    ['sample rate', { format: { ...base.format, sampleRate: 8000 } }],
    ['bit rate', { format: { container: 'mp3', sampleRate: 44100, bitRate: 128000 } }],
    ['streaming', { streaming: false }],
    ['timestamps', { timestamps: true }],
  ];
  const seen = new Map<string, string>([[key, 'base']]);
  for (const [name, change] of variants) {
    const changed = audioCacheKey({ ...base, ...change });
    assert.ok(!seen.has(changed), `${name} gave the same key as ${seen.get(changed)}`);
    seen.set(changed, name);
  }
  const dict = audioCacheKey({ ...base, pronunciation: [{ text: 'there', alias: 'thair' }] });
  assert.notEqual(audioCacheKey({ ...base, pronunciation: [{ text: 'there', alias: 'thare' }] }), dict, 'an edited alias');
});

test('canonical JSON sorts keys at every level and refuses what JSON cannot say exactly', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: null }], c: 'x' }, u: undefined }), '{"a":{"c":"x","d":[1,{"y":null,"z":0}]},"b":1}');
  assert.throws(() => canonicalJson({ a: Number.NaN }));
});

test('keys are stable across releases of the same encoding: fixed ingredients give a fixed key', () => {
  // Entries on disk and in Redis outlive a restart: a faster encoder must give the very same keys.
  const revision = voiceRevision(voice, null, 1.2);
  assert.equal(revision, '4201319521ae088382da6eb2a2a9007b34180da6111fa2760132ad5b5989e010');
  assert.equal(voiceRevision(voice, 'a'.repeat(64), 0.1 + 0.2), 'f2022266e8a5d2a0a89c2fbba09c98ea085a3fcdcc3ffba70bcfa31375f51f62');
  assert.equal(audioCacheKey({ ...base, pronunciation: [{ text: 'there', alias: 'thair', case_sensitive: true }] }), 'ed6dcb01272cf1c58a84bd611f6a93d5d2d8c121a5f84e50cf9090a93436129b');
  assert.equal(canonicalJson({ b: [1, undefined, 'x\u2028"', { é: 1, Z: -0, a: 1e21 }], a: null, 'a b': true }), '{"a":null,"a b":true,"b":[1,null,"x\u2028\\"",{"Z":0,"a":1e+21,"é":1}]}');
});
