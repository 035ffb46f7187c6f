/**
 * @module test/sherpa-kokoro
 * Kokoro v1 as sherpa-onnx publishes it, on a stand-in the test writes in the
 * archive's layout (`helpers/sherpa-model.ts`: the files of
 * `kokoro-multi-lang-v1_0`, a 53-speaker `voices.bin`, the speaker names in
 * the ONNX metadata, and a graph whose pitch is the style vector's): every
 * speaker is listed by `/voices` and ElevenLabs' `/v1/voices` with the
 * language and gender its name says, every one speaks in its own voice, and
 * a request's `language` picks the language the text is read in.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { findEntry } from '../src/cli/models/catalogue.js';
import { describeSpeaker } from '../src/engines/sherpa/speakers.js';
import { pitchOf } from './helpers/audio.js';
import { KOKORO_STAND_IN_RATE, KOKORO_V1_SPEAKERS, kokoroSpeakerStyle, kokoroStandIn, kokoroStandInPitch, removeRunDir } from './helpers/sherpa-model.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: KOKORO_STAND_IN_RATE } as const;

before(async () => {
  server = await startServer({
    config: {
      engines: { kokoro: { type: 'sherpa-onnx', model: kokoroStandIn(), workers: 1 } } as never,
      models: { 'kokoro-v1': { extends: 'gepard-1.0', engine: 'kokoro', defaultVoice: 'af_bella' } } as never,
    },
  });
}, { timeout: 120_000 });
after(async () => {
  await server?.close();
  removeRunDir();
});

async function speak(voice: string, transcript: string, language?: string): Promise<Float32Array> {
  const response = await server.post('/tts/bytes', { model_id: 'kokoro-v1', transcript, voice: { mode: 'id', id: voice }, output_format: RAW, ...(language ? { language } : {}) });
  assert.equal(response.status, 200, await response.clone().text());
  const bytes = new Uint8Array(await response.arrayBuffer());
  return Float32Array.from(new Int16Array(bytes.buffer, 0, bytes.length >> 1), (s) => s / 32768);
}

test('the stand-in holds exactly the files of the published Kokoro v1 archives', () => {
  for (const [name, quantised] of [['kokoro-multi-lang-v1_0', false], ['kokoro-int8-multi-lang-v1_0', true]] as const) {
    const published = findEntry(name)?.files;
    assert.ok(published, `${name} lists its files in the catalogue`);
    assert.deepEqual(readdirSync(kokoroStandIn(name, { quantised })).sort(), [...published].sort(), name);
  }
  // v1.1 is packed by the same workflow step, with the same names.
  assert.deepEqual([...findEntry('kokoro-multi-lang-v1_1')!.files!].sort(), [...findEntry('kokoro-multi-lang-v1_0')!.files!].sort());
});

test('GET /voices and /v1/voices list every speaker with the language and gender its name says', { timeout: 30_000 }, async () => {
  const listed: Record<string, any>[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = (await (await fetch(`${server.url}/voices?limit=100${cursor ? `&starting_after=${cursor}` : ''}`)).json()) as { data: Record<string, any>[]; has_more: boolean };
    listed.push(...page.data);
    if (!page.has_more) break;
    cursor = page.data.at(-1)!.id;
  }
  const byId = new Map(listed.map((v) => [v.id, v]));
  for (const name of KOKORO_V1_SPEAKERS) {
    const voice = byId.get(name);
    assert.ok(voice, `${name} is listed`);
    const said = describeSpeaker(name)!;
    assert.equal(voice.language, said.language, name);
    assert.equal(voice.gender, said.gender, name);
  }
  assert.deepEqual(
    ['af_bella', 'bm_george', 'ef_dora', 'ff_siwis', 'hf_alpha', 'im_nicola', 'jf_alpha', 'pm_alex', 'zf_xiaoxiao'].map((id) => [id, byId.get(id)!.language, byId.get(id)!.gender]),
    [
      ['af_bella', 'en-us', 'feminine'],
      ['bm_george', 'en-gb', 'masculine'],
      ['ef_dora', 'es', 'feminine'],
      ['ff_siwis', 'fr', 'feminine'],
      ['hf_alpha', 'hi', 'feminine'],
      ['im_nicola', 'it', 'masculine'],
      ['jf_alpha', 'ja', 'feminine'],
      ['pm_alex', 'pt-br', 'masculine'],
      ['zf_xiaoxiao', 'zh', 'feminine'],
    ],
  );
  const filtered = (await (await fetch(`${server.url}/voices?language=fr&limit=100`)).json()) as { data: { id: string }[] };
  assert.deepEqual(filtered.data.map((v) => v.id).filter((id) => KOKORO_V1_SPEAKERS.includes(id)), ['ff_siwis']);

  const eleven = (await (await fetch(`${server.url}/v1/voices`)).json()) as { voices: { voice_id: string; labels: Record<string, string> }[] };
  const elevenIds = new Set(eleven.voices.map((v) => v.voice_id));
  for (const name of KOKORO_V1_SPEAKERS) assert.ok(elevenIds.has(name), `${name} is in /v1/voices`);
});

test('every speaker speaks in its own voice (its own row of voices.bin)', { timeout: 120_000 }, async () => {
  for (const [sid, name] of KOKORO_V1_SPEAKERS.entries()) {
    const samples = await speak(name, 'Hello world.');
    assert.ok(samples.length > 0, `${name} made audio`);
    const expected = kokoroStandInPitch(kokoroSpeakerStyle(sid));
    const pitch = pitchOf(samples, KOKORO_STAND_IN_RATE);
    assert.ok(Math.abs(pitch - expected) < expected * 0.01, `${name} speaks at ${pitch.toFixed(1)} Hz, its style's ${expected} Hz`);
  }
});

test('an old speaker id (`<engine>-<sid>`) still names that speaker, which is listed once, by its name', { timeout: 60_000 }, async () => {
  const sid = KOKORO_V1_SPEAKERS.indexOf('bf_emma');
  const byName = await speak('bf_emma', 'Hello world.');
  const byOldId = await speak(`kokoro-${sid}`, 'Hello world.');
  assert.deepEqual(byOldId, byName);
  const listed = (await (await fetch(`${server.url}/voices?limit=100`)).json()) as { data: { id: string }[] };
  assert.ok(!listed.data.some((v) => v.id === `kokoro-${sid}`), 'the old id is not listed');
  const voice = (await (await fetch(`${server.url}/voices/kokoro-${sid}`)).json()) as { id: string };
  assert.equal(voice.id, 'bf_emma');
});

test("a request's language picks the language the text is read in; without one, the voice's own", { timeout: 60_000 }, async () => {
  const text = 'Bonjour le monde, merci beaucoup.';
  // The stand-in makes a fixed length per phoneme token, so the length shows how eSpeak NG read the text.
  const english = (await speak('af_bella', text)).length;
  const french = (await speak('af_bella', text, 'fr')).length;
  const siwis = (await speak('ff_siwis', text)).length;
  assert.notEqual(french, english, 'read as French, the text has other phonemes than read as English');
  assert.equal(siwis, french, "ff_siwis reads in French without being asked: its name's language");
  assert.equal((await speak('ff_siwis', text, 'en')).length, english, 'a French voice asked for English reads English');
  // Asking for the voice's own language keeps its accent: en with a British voice stays British.
  const british = (await speak('bf_emma', 'Tomato and water.')).length;
  assert.equal((await speak('bf_emma', 'Tomato and water.', 'en')).length, british);
  // A language the model does not speak leaves the voice's own.
  assert.equal((await speak('af_bella', text, 'de')).length, english);
});

test('a Kokoro mix is the weighted mean of its speakers\' style vectors, loaded once and then served without a reload', { timeout: 120_000 }, async () => {
  const engine = server.app.services.engines.get('kokoro')!;
  const reloads = () => engine.info().mixReloads as number;
  const sid = (name: string) => KOKORO_V1_SPEAKERS.indexOf(name);
  const hz = async (voice: string) => pitchOf(await speak(voice, 'Hello world.'), KOKORO_STAND_IN_RATE);
  const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < expected * 0.01, `${what}: ${actual.toFixed(1)} Hz, expected ${expected.toFixed(1)} Hz`);

  const before = reloads();
  const alloy = kokoroStandInPitch(kokoroSpeakerStyle(sid('af_alloy')));
  const sky = kokoroStandInPitch(kokoroSpeakerStyle(sid('af_sky')));
  const mixed = await hz('af_alloy(1)+af_sky(1)');
  near(mixed, (alloy + sky) / 2, 'an even mix');
  assert.ok(Math.abs(mixed - alloy) > 10 && Math.abs(mixed - sky) > 10, 'the mix differs from each speaker');
  assert.equal(reloads(), before + 1, 'a new mix loads the table once');
  near(await hz('af_sky(1)+af_alloy(1)'), (alloy + sky) / 2, 'the same mix in another order');
  near(await hz('af_alloy(3)+af_sky(1)'), 0.75 * alloy + 0.25 * sky, 'a 3:1 mix');
  assert.equal(reloads(), before + 2, 'only the new mix loaded the table again');
  near(await hz('af_alloy(1)+af_sky(1)'), (alloy + sky) / 2, 'the first mix again');
  assert.equal(reloads(), before + 2, 'a mix in the table is served without a reload');
  near(await hz('af_alloy(1)+af_sky(0)'), alloy, 'weights 1:0');
  assert.equal(reloads(), before + 2, 'a mix of one speaker is that speaker');

  // Stored, it is the same voice, usable by its id.
  const created = await server.post('/voices/mix', { name: 'Alloy and Sky', voices: [{ id: 'af_alloy', weight: 1 }, { id: 'af_sky', weight: 1 }] });
  assert.equal(created.status, 201, await created.clone().text());
  const { id } = (await created.json()) as { id: string };
  near(await hz(id), (alloy + sky) / 2, 'the stored mix');
  // A Kokoro voice mixed with an eSpeak one: not one engine's voices.
  const wrong = await server.post('/tts/bytes', { model_id: 'kokoro-v1', transcript: 'Hello.', voice: { mode: 'id', id: 'af_alloy(1)+sarah(1)' }, output_format: RAW });
  assert.equal(wrong.status, 409, await wrong.clone().text());
});
