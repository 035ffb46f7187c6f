/**
 * @module voices/reference.test
 * The decoded-clip cache: one decode per voice (concurrent first requests
 * included), least recently used out past either bound, a clip too large
 * for the byte bound served but not kept, a deleted voice's clip "not
 * found", and the transcript taken from the voice of each request.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { floatToInt16, int16ToBytes } from '../audio/pcm.js';
import { wavHeader } from '../audio/wav.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../store/store.js';
import { ReferenceClips } from './reference.js';
import type { Voice } from './voice.js';

const RATE = 24000;

function wav(seconds: number, value: number): Buffer {
  const pcm = int16ToBytes(floatToInt16(new Float32Array(Math.round(seconds * RATE)).fill(value)));
  return Buffer.concat([wavHeader({ sampleRate: RATE, encoding: 'pcm_s16le', dataBytes: pcm.length }), pcm]);
}

/** A store with only the clips, counting reads. */
function clipStore(clips: Map<string, Buffer>) {
  const reads: string[] = [];
  const store = { voices: { clip: async (id: string) => (reads.push(id), clips.get(id) ?? null) } } as unknown as Store;
  return { store, reads };
}

const voice = (id: string, transcript: string | null = null): Voice => ({
  id,
  name: id,
  description: '',
  gender: 'gender_neutral',
  language: 'en',
  accent: null,
  ownerOrgId: 'org_1',
  createdAt: '2030-01-01T00:00:00.000Z',
  profiles: {},
  clipSeconds: 1,
  transcript,
});

describe('ReferenceClips', () => {
  it('decodes a clip once, into shared memory, and shares it between concurrent and later requests', async () => {
    const { store, reads } = clipStore(new Map([['v1', wav(1, 0.5)]]));
    const clips = new ReferenceClips(store);
    const [a, b] = await Promise.all([clips.get(voice('v1')), clips.get(voice('v1'))]);
    const c = await clips.get(voice('v1'));
    assert.deepEqual(reads, ['v1']);
    assert.equal(clips.decodes, 1);
    assert.equal(a.audio, b.audio);
    assert.equal(a.audio, c.audio);
    assert.ok(a.audio.buffer instanceof SharedArrayBuffer);
    assert.equal(a.sampleRate, RATE);
    assert.equal(a.audio.length, RATE);
    assert.ok(Math.abs(a.audio[100] - 0.5) < 1e-3);
  });

  it('takes the transcript from each request\'s voice, trimmed, and leaves it out when there is none', async () => {
    const clips = new ReferenceClips(clipStore(new Map([['v1', wav(1, 0.5)]])).store);
    assert.equal((await clips.get(voice('v1', '  What it says. '))).text, 'What it says.');
    assert.equal('text' in (await clips.get(voice('v1', null))), false);
    assert.equal('text' in (await clips.get(voice('v1', '   '))), false);
  });

  it('keeps at most maxEntries voices, least recently used out', async () => {
    const stored = new Map(['a', 'b', 'c'].map((id) => [id, wav(1, 0.1)] as const));
    const { store, reads } = clipStore(stored);
    const clips = new ReferenceClips(store, { maxEntries: 2, maxBytes: 1 << 30 });
    await clips.get(voice('a'));
    await clips.get(voice('b'));
    await clips.get(voice('a')); // a is now the most recent
    await clips.get(voice('c')); // b goes
    assert.deepEqual(clips.stats(), { entries: 2, bytes: 2 * RATE * 4 });
    reads.length = 0;
    await clips.get(voice('a'));
    await clips.get(voice('c'));
    assert.deepEqual(reads, []);
    await clips.get(voice('b'));
    assert.deepEqual(reads, ['b']);
  });

  it('keeps at most maxBytes of samples; a clip larger than that is served but not kept', async () => {
    const { store, reads } = clipStore(new Map([['small', wav(1, 0.1)], ['other', wav(1, 0.1)], ['huge', wav(3, 0.1)]]));
    const clips = new ReferenceClips(store, { maxEntries: 10, maxBytes: 2.5 * RATE * 4 });
    await clips.get(voice('small'));
    await clips.get(voice('other'));
    assert.equal(clips.stats().entries, 2);
    const huge = await clips.get(voice('huge'));
    assert.equal(huge.audio.length, 3 * RATE);
    assert.deepEqual(clips.stats(), { entries: 2, bytes: 2 * RATE * 4 });
    await clips.get(voice('huge'));
    assert.equal(reads.filter((id) => id === 'huge').length, 2);
  });

  it('a voice whose clip is gone is voice_not_found, and a failure is not kept', async () => {
    const stored = new Map<string, Buffer>();
    const clips = new ReferenceClips(clipStore(stored).store);
    await assert.rejects(clips.get(voice('gone')), (err: unknown) => err instanceof ApiError && err.code === 'voice_not_found');
    stored.set('gone', wav(1, 0.2));
    assert.equal((await clips.get(voice('gone'))).audio.length, RATE);
  });

  it('a stored clip that cannot be decoded is engine_error', async () => {
    const clips = new ReferenceClips(clipStore(new Map([['bad', Buffer.from('not a wav file at all')]])).store);
    await assert.rejects(clips.get(voice('bad')), (err: unknown) => err instanceof ApiError && err.code === 'engine_error');
  });
});
