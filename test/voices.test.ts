/**
 * @module test/voices
 * The voices API with the Cartesia SDK and fetch: paging to the end, filters,
 * cloning from real WAV and MP3 clips, update, delete, the 409 for a cloned
 * voice on an engine that cannot clone, clip validation, read-only built-ins
 * and isolation between organisations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cartesia, { toFile } from '@cartesia/cartesia-js';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
let a: TestOrg;
let b: TestOrg;
let clientA: Cartesia;
let wavClip: Buffer;
let mp3Clip: Buffer;

before(async () => {
  server = await startServer({
    config: { accounts: { enabled: true }, voices: { maxClipBytes: 2 * 1024 * 1024 }, models: { 'tone-any': { extends: 'omnivoice', engine: 'tone' } } },
  });
  a = await newOrg(server);
  b = await newOrg(server);
  clientA = new Cartesia({ apiKey: a.key, baseURL: server.url, maxRetries: 0 });
  const speech = 'This is my voice, recorded for cloning. It says a few clear sentences.';
  wavClip = Buffer.from(await (await server.post('/tts/bytes', ttsBody({ transcript: speech, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 44100 } }), a.auth)).arrayBuffer());
  mp3Clip = Buffer.from(await (await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: speech, output_format: { container: 'mp3', sample_rate: 22050, bit_rate: 64000 } }), a.auth)).arrayBuffer());
});
after(() => server.close());

async function clone(org: TestOrg, clip: Buffer, fields: Record<string, string>, filename = 'clip.wav'): Promise<Response> {
  const form = new FormData();
  form.set('clip', new Blob([clip]), filename);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return fetch(server.url + '/voices/clone', { method: 'POST', headers: org.auth, body: form });
}

describe('cloning', () => {
  let voiceId: string;

  test('the SDK clones a voice from a real WAV clip; the clip is stored mono 24 kHz', async () => {
    const voice = await clientA.voices.clone({ clip: await toFile(wavClip, 'me.wav', { type: 'audio/wav' }), name: 'My voice', language: 'en', description: 'Cloned in a test' });
    voiceId = voice.id;
    assert.match(voice.id, /^voice_/);
    assert.equal(voice.name, 'My voice');
    assert.equal(voice.language, 'en');
    assert.equal((voice as any).is_owner, true);
    const stored = await server.app.services.store.voices.clip(voice.id);
    const wav = parseWav(stored!);
    assert.equal(wav.sampleRate, 24000);
    assert.equal(wav.channels, 1);
    assert.ok(wav.data.length / 2 / 24000 > 3);
  });

  test('an MP3 clip clones too', async () => {
    const response = await clone(a, mp3Clip, { name: 'From mp3', language: 'en-US', gender: 'feminine', transcript: 'This is my voice.' }, 'me.mp3');
    const voice = (await response.json()) as any;
    assert.equal(response.status, 200, JSON.stringify(voice));
    assert.equal(voice.gender, 'feminine');
    assert.equal(voice.language, 'en-us');
  });

  test('a cloned voice on a model served by eSpeak NG is 409 voice_profile_missing; on an engine that takes any voice it speaks', async () => {
    const response = await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: voiceId } }), a.auth);
    const body = (await response.json()) as any;
    assert.equal(response.status, 409);
    assert.equal(body.error_code, 'voice_profile_missing');
    assert.match(body.message, /espeak/);
    await assert.rejects(
      clientA.tts.generate({ model_id: 'gepard-1.0', transcript: 'Hi', voice: { mode: 'id', id: voiceId }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 } }),
      (err: unknown) => err instanceof Cartesia.ConflictError,
    );
    const spoken = await server.post('/tts/bytes', ttsBody({ model_id: 'tone-any', voice: { mode: 'id', id: voiceId } }), a.auth);
    assert.equal(spoken.status, 200);
    await spoken.arrayBuffer();
  });

  test('update, get and delete through the SDK', async () => {
    const updated = await clientA.voices.update(voiceId, { name: 'Renamed', description: 'New words' });
    assert.equal(updated.name, 'Renamed');
    assert.equal((await clientA.voices.get(voiceId)).description, 'New words');
    await clientA.voices.delete(voiceId);
    await assert.rejects(clientA.voices.get(voiceId), (err: unknown) => err instanceof Cartesia.NotFoundError);
  });

  test('bad clips and fields are refused with clear errors', async () => {
    const expect = async (response: Response, status: number, code: string, message?: RegExp) => {
      const body = (await response.json()) as any;
      assert.equal(response.status, status, JSON.stringify(body));
      assert.equal(body.error_code, code);
      if (message) assert.match(body.message, message);
    };
    await expect(await clone(a, Buffer.from('not audio at all, just text'), { name: 'x', language: 'en' }), 400, 'invalid_audio', /WAV or MP3/);
    const header = wavClip.subarray(0, 44);
    const short = Buffer.concat([header, wavClip.subarray(44, 44 + 44100)]); // 0.5 s
    short.writeUInt32LE(44100, 40);
    await expect(await clone(a, short, { name: 'x', language: 'en' }), 400, 'invalid_audio', /1–120 seconds/);
    const silent = Buffer.concat([header, Buffer.alloc(44100 * 2 * 3)]);
    silent.writeUInt32LE(44100 * 2 * 3, 40);
    await expect(await clone(a, silent, { name: 'x', language: 'en' }), 400, 'invalid_audio', /silent/);
    const long = Buffer.concat([header, Buffer.alloc(8000 * 2 * 125, 1)]);
    long.writeUInt32LE(8000, 24);
    long.writeUInt32LE(16000, 28);
    long.writeUInt32LE(8000 * 2 * 125, 40);
    await expect(await clone(a, long, { name: 'x', language: 'en' }), 400, 'invalid_audio', /1–120 seconds/);
    await expect(await clone(a, Buffer.alloc(3 * 1024 * 1024), { name: 'x', language: 'en' }), 413, 'payload_too_large');
    await expect(await clone(a, wavClip, { language: 'en' }), 400, 'invalid_request', /name is required/);
    await expect(await clone(a, wavClip, { name: 'x', language: 'english please' }), 400, 'invalid_request', /language/);
    const noClip = new FormData();
    noClip.set('name', 'x');
    noClip.set('language', 'en');
    await expect(await fetch(server.url + '/voices/clone', { method: 'POST', headers: a.auth, body: noClip }), 400, 'invalid_request', /clip is required/);
    // Malformed multipart bodies are the client's error too: no boundary, or a body cut short.
    const multipart = (contentType: string, body: string) => fetch(server.url + '/voices/clone', { method: 'POST', headers: { ...a.auth, 'content-type': contentType }, body });
    await expect(await multipart('multipart/form-data', 'whatever'), 400, 'invalid_request');
    await expect(
      await multipart('multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="clip"; filename="a.wav"\r\n\r\nRIFF'),
      400,
      'invalid_request',
    );
  });
});

describe('listing', () => {
  test('the SDK pages through every visible voice to the end', async () => {
    const total = (await server.app.services.voices.list(a.orgId)).length;
    const ids: string[] = [];
    for await (const voice of clientA.voices.list({ limit: 25 })) ids.push(voice.id);
    assert.equal(ids.length, total);
    assert.equal(new Set(ids).size, total);
  });

  test('cursor pages: starting_after, ending_before, and an empty page past the end', async () => {
    const get = async (query: string) => (await (await fetch(`${server.url}/voices?${query}`, { headers: a.auth })).json()) as any;
    const first = await get('limit=3');
    assert.equal(first.data.length, 3);
    assert.equal(first.has_more, true);
    const second = await get(`limit=3&starting_after=${first.data[2].id}`);
    const back = await get(`limit=3&ending_before=${second.data[0].id}`);
    assert.deepEqual(back.data.map((v: any) => v.id), first.data.map((v: any) => v.id));
    const all = await get('limit=100&gender=masculine');
    const last = all.data.at(-1).id;
    assert.deepEqual(await get(`limit=100&gender=masculine&starting_after=${last}`), { data: [], has_more: false });
  });

  test('filters: q, gender, language, is_owner', async () => {
    const get = async (query: string) => ((await (await fetch(`${server.url}/voices?limit=100&${query}`, { headers: a.auth })).json()) as any).data;
    const scottish = await get('q=scottish');
    assert.ok(scottish.some((v: any) => v.id === 'isla'));
    assert.ok(scottish.every((v: any) => `${v.name} ${v.description}`.toLowerCase().includes('scottish')), 'only matches');
    assert.ok((await get('gender=masculine')).every((v: any) => v.gender === 'masculine'));
    const french = await get('language=fr');
    assert.ok(french.length >= 1 && french.every((v: any) => v.language.startsWith('fr')));
    const mine = await get('is_owner=true');
    assert.ok(mine.length >= 1 && mine.every((v: any) => v.is_owner === true));
  });
});

describe('isolation and built-ins', () => {
  test("another organisation's voice is 404 everywhere, and absent from its lists", async () => {
    const voice = (await (await clone(a, wavClip, { name: 'Private', language: 'en' })).json()) as any;
    const other = { headers: b.auth };
    assert.equal((await fetch(`${server.url}/voices/${voice.id}`, other)).status, 404);
    assert.equal((await fetch(`${server.url}/voices/${voice.id}`, { ...other, method: 'PATCH', headers: { ...b.auth, 'content-type': 'application/json' }, body: '{"name":"x"}' })).status, 404);
    assert.equal((await fetch(`${server.url}/voices/${voice.id}`, { ...other, method: 'DELETE' })).status, 404);
    const used = await server.post('/tts/bytes', ttsBody({ model_id: 'tone-any', voice: { mode: 'id', id: voice.id } }), b.auth);
    assert.equal(used.status, 404);
    assert.equal(((await used.json()) as any).error_code, 'voice_not_found');
    const list = ((await (await fetch(`${server.url}/voices?limit=100&is_owner=true`, other)).json()) as any).data;
    assert.deepEqual(list, []);
    assert.equal((await fetch(`${server.url}/voices/${voice.id}`, { headers: a.auth })).status, 200);
  });

  test('an update and a mix are refused by their schema as before, and only after the key and the voice are known', async () => {
    const voice = (await (await clone(a, wavClip, { name: 'Checked', language: 'en' })).json()) as any;
    const send = (method: string, path: string, body: string, auth: Record<string, string> = a.auth) =>
      fetch(`${server.url}${path}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body });
    const refused = async (response: Response, code: string, message: RegExp) => {
      const answer = (await response.json()) as any;
      assert.equal(response.status, 400, JSON.stringify(answer));
      assert.equal(answer.error_code, code);
      assert.match(answer.message, message);
    };
    await refused(await send('PATCH', `/voices/${voice.id}`, '{"name": 5}'), 'invalid_request', /name must be a string of at most 200 characters/);
    await refused(await send('PATCH', `/voices/${voice.id}`, JSON.stringify({ description: 'x'.repeat(1001) })), 'invalid_request', /description must be a string of at most 1000/);
    await refused(await send('PATCH', `/voices/${voice.id}`, '{"gender": "robot"}'), 'invalid_request', /gender must be one of feminine, masculine, gender_neutral/);
    await refused(await send('PATCH', `/voices/${voice.id}`, '[1]'), 'invalid_json', /./);
    assert.equal((await send('PATCH', `/voices/${voice.id}`, '{"gender": ""}')).status, 200, 'an empty gender changes nothing');
    assert.equal((await send('PATCH', '/voices/sarah', '{"gender": "robot"}')).status, 403, 'a built-in is not editable, whatever the body');
    assert.equal((await send('PATCH', `/voices/${voice.id}`, '{"gender": "robot"}', {})).status, 401);
    await refused(await send('POST', '/voices/mix', '{"name": "m"}'), 'invalid_request', /voices must be a list of \{id, weight\}/);
    await refused(await send('POST', '/voices/mix', '{"voices": [{"id": "sarah", "weight": 1}]}'), 'invalid_request', /name is required/);
    assert.equal((await send('POST', '/voices/mix', '{"name": "m"}', {})).status, 401);
  });

  test('built-in voices cannot be changed or deleted', async () => {
    const patch = await fetch(`${server.url}/voices/sarah`, { method: 'PATCH', headers: { ...a.auth, 'content-type': 'application/json' }, body: '{"name":"Mine now"}' });
    assert.equal(patch.status, 403);
    assert.equal(((await patch.json()) as any).error_code, 'voice_not_editable');
    assert.equal((await fetch(`${server.url}/voices/sarah`, { method: 'DELETE', headers: a.auth })).status, 403);
    assert.equal((await clientA.voices.get('sarah')).name, 'Sarah');
  });
});
