/**
 * @module test/voice-mix
 * Voice mixing against a real server with accounts: `POST /voices/mix` stores
 * a mix usable wherever a cloned voice is (list, get, delete, speech in
 * every dialect), inline ids (`sarah(1)+jordan(1)`) mix per request, eSpeak
 * NG mixes are the weighted mean of the voices' pitch settings (measured on the
 * engine's audio), every pair of built-in voices far apart in pitch mixes
 * between them (1:1 between, 2:1 nearer the heavier, across variants),
 * weights 1:0 speak as the first voice, a mix has its own cache revision and
 * loudness gain, and bad mixes — unknown voices, zero or negative weights,
 * too many voices, an engine that cannot mix — are refused before anything
 * is billed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeToFloat } from '../src/audio/decode.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { gainOf } from '../src/synthesis/voice-gain.js';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import type { Voice } from '../src/voices/voice.js';
import { pitchOf } from './helpers/audio.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
const WAV = { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } as const;
const TEXT = 'A steady voice reads this sentence aloud for the measurement.';

before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'tone-any': { extends: 'omnivoice', engine: 'tone' } } as never } });
  org = await newOrg(server);
}, { timeout: 60_000 });
after(() => server?.close());

const profile = (id: string) => NAMED_VOICES.find((v) => v.id === id)!.profiles.espeak!;
// Two built-in voices far apart in pitch, with the same eSpeak voice.
const [HIGH, LOW] = (() => {
  const us = NAMED_VOICES.filter((v) => v.profiles.espeak?.voice === 'en-us' && v.profiles.espeak.variant !== 'klatt').sort((a, b) => b.profiles.espeak!.pitch - a.profiles.espeak!.pitch);
  return [us[0].id, us.at(-1)!.id];
})();

async function speak(voice: string, model = 'gepard-1.0'): Promise<Response> {
  return server.post('/tts/bytes', ttsBody({ model_id: model, transcript: TEXT, voice: { mode: 'id', id: voice }, output_format: WAV }), org.auth);
}

async function pitch(voice: string): Promise<{ hz: number; bytes: Buffer }> {
  const response = await speak(voice);
  assert.equal(response.status, 200, await response.clone().text());
  const bytes = Buffer.from(await response.arrayBuffer());
  const { samples, sampleRate } = await decodeToFloat(bytes, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 });
  return { hz: pitchOf(samples, sampleRate), bytes };
}

const balance = async () => (await balanceOf(server, org.orgId)).balance;

test('an eSpeak mix speaks at the weighted mean of its voices\' pitch, measured on the audio; 1:0 is the first voice', { timeout: 60_000 }, async () => {
  // On the engine itself, whose audio for a profile is the same every time: through a server, the
  // same voice's phrasing varies a little from request to request, more than these steps of pitch.
  const engine = new EspeakPool({ id: 'espeak', workers: 1, queueLimit: 8, highWater: 8, warmUpJobs: 0, logger: createLogger('silent') });
  await engine.start();
  try {
    // Two voices of one eSpeak voice and variant, far apart in pitch setting, so the pitch of a mix
    // measures the mean of that setting alone (a mix speaks in its largest part's voice and variant).
    const michael = (await server.app.services.voices.get(LOW, null))!;
    const at = (pitch: number): Voice => ({ ...michael, id: `pitch-${pitch}`, profiles: { espeak: { ...michael.profiles.espeak!, pitch } } });
    const [low, high] = [at(20), at(80)];
    const hz = async (voice: Voice) => {
      const chunks: Float32Array[] = [];
      for await (const chunk of engine.synthesize({ text: TEXT, voice, speed: 1, wordTimings: false }, new AbortController().signal)) chunks.push(chunk.samples);
      const samples = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) samples.set(c, (at += c.length) - c.length);
      return pitchOf(samples, engine.sampleRate);
    };
    const mixed = (parts: [Voice, number][]) => {
      const total = parts.reduce((sum, [, w]) => sum + w, 0);
      const mix = parts.map(([voice, w]) => ({ voice, weight: w / total }));
      return { ...low, id: 'mix', profiles: engine.mixProfiles(mix)! };
    };
    const base = await hz(low);
    const lean = await hz(mixed([[low, 3], [high, 1]]));
    const even = await hz(mixed([[low, 1], [high, 1]]));
    const top = await hz(high);
    const say = `pitch 20: ${base.toFixed(1)} Hz, 3:1 (35): ${lean.toFixed(1)} Hz, 1:1 (50): ${even.toFixed(1)} Hz, pitch 80: ${top.toFixed(1)} Hz`;
    assert.ok(lean > base * 1.05, `a quarter of the higher voice raises the pitch: ${say}`);
    assert.ok(even > lean * 1.05, `half of it raises it further: ${say}`);
    assert.ok(top > even * 1.05, `and the mix stays below the higher voice: ${say}`);
    const first = await hz(mixed([[low, 1], [high, 0]]));
    assert.ok(Math.abs(first - base) < base * 0.03, `weights 1:0 speak as the first voice: ${first.toFixed(1)} vs ${base.toFixed(1)} Hz`);
  } finally {
    await engine.stop();
  }
});

test('every pair of built-in voices far apart in pitch mixes between them: 1:1 between, 2:1 nearer the heavier (median F0 of the audio)', { timeout: 120_000 }, async () => {
  // On the default model, as a user mixes them: voices of different variants (female and male) included.
  const SHORT = 'She reads a short line.';
  const f0 = async (voice: string) => {
    const response = await server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: SHORT, voice: { mode: 'id', id: voice }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }), org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    const { samples, sampleRate } = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 16000 });
    return pitchOf(samples, sampleRate);
  };
  const alone = new Map<string, number>();
  for (const voice of NAMED_VOICES) alone.set(voice.id, await f0(voice.id));
  const pairs: [string, string][] = [];
  for (const [i, a] of NAMED_VOICES.entries()) {
    for (const b of NAMED_VOICES.slice(i + 1)) {
      const [fa, fb] = [alone.get(a.id)!, alone.get(b.id)!];
      if (Math.max(fa, fb) > 1.3 * Math.min(fa, fb)) pairs.push([a.id, b.id]);
    }
  }
  assert.ok(pairs.length >= 4, `built-in voices far apart in pitch: ${[...alone].map(([id, hz]) => `${id} ${hz.toFixed(0)} Hz`).join(', ')}`);
  const wrong: string[] = [];
  for (const [a, b] of pairs) {
    const [fa, fb] = [alone.get(a)!, alone.get(b)!];
    const [low, high] = [Math.min(fa, fb), Math.max(fa, fb)];
    const even = await f0(`${a}(1)+${b}(1)`);
    const say = `${a} ${fa.toFixed(0)} Hz, ${b} ${fb.toFixed(0)} Hz`;
    // Between, and clear of either end by a fifth of the gap: not one voice with a touch of the other.
    const margin = (high - low) / 5;
    if (!(even > low + margin && even < high - margin)) wrong.push(`${a}(1)+${b}(1): ${even.toFixed(0)} Hz, not between ${say}`);
    for (const [heavy, light, mix] of [[a, b, `${a}(2)+${b}(1)`], [b, a, `${a}(1)+${b}(2)`]] as const) {
      const hz = await f0(mix);
      const [toHeavy, toLight] = [Math.abs(hz - alone.get(heavy)!), Math.abs(hz - alone.get(light)!)];
      if (!(hz > low && hz < high && toHeavy < toLight)) wrong.push(`${mix}: ${hz.toFixed(0)} Hz, not between and nearer ${heavy} (${say})`);
    }
  }
  assert.deepEqual(wrong, [], wrong.join('\n'));
});

test('POST /voices/mix stores a voice usable wherever cloned voices are, in every dialect', { timeout: 60_000 }, async () => {
  const created = await server.post('/voices/mix', { name: 'Halfway', voices: [{ id: HIGH, weight: 2 }, { id: LOW, weight: 2 }] }, org.auth);
  assert.equal(created.status, 201, await created.clone().text());
  const voice = (await created.json()) as { id: string; name: string; mix: { id: string; weight: number }[]; is_owner: boolean };
  assert.equal(voice.name, 'Halfway');
  assert.deepEqual(voice.mix.map((p) => [p.id, p.weight]).sort(), [[HIGH, 0.5], [LOW, 0.5]].sort());
  assert.equal(voice.is_owner, true);

  const listed = (await (await fetch(`${server.url}/voices?is_owner=true`, { headers: org.auth })).json()) as { data: { id: string }[] };
  assert.ok(listed.data.some((v) => v.id === voice.id));
  // Another organisation does not see it.
  const other = await newOrg(server);
  assert.equal((await fetch(`${server.url}/voices/${voice.id}`, { headers: other.auth })).status, 404);

  const stored = await pitch(voice.id);
  const inline = await pitch(`${HIGH}(1)+${LOW}(1)`);
  assert.ok(Math.abs(stored.hz - inline.hz) < inline.hz * 0.03, `the stored mix speaks as the same mix inline (${stored.hz.toFixed(1)} vs ${inline.hz.toFixed(1)} Hz)`);

  const openai = await server.post('/v1/audio/speech', { model: 'gepard-1.0', input: TEXT, voice: `${HIGH}(1)+${LOW}(1)`, response_format: 'wav' }, { authorization: `Bearer ${org.key}` });
  assert.equal(openai.status, 200, await openai.clone().text());
  const eleven = await server.post(`/v1/text-to-speech/${encodeURIComponent(voice.id)}?output_format=pcm_22050`, { text: TEXT, model_id: 'gepard-1.0' }, { 'xi-api-key': org.key });
  assert.equal(eleven.status, 200, await eleven.clone().text());
  const elevenInline = await server.post(`/v1/text-to-speech/${HIGH}(1)+${LOW}(1)?output_format=pcm_22050`, { text: TEXT, model_id: 'gepard-1.0' }, { 'xi-api-key': org.key });
  assert.equal(elevenInline.status, 200, await elevenInline.clone().text());

  assert.equal((await fetch(`${server.url}/voices/${voice.id}`, { method: 'DELETE', headers: org.auth })).status, 204);
  assert.equal((await speak(voice.id)).status, 404);
});

test('a mix has its own audio-cache entry and loudness gain', { timeout: 60_000 }, async () => {
  const mix = `${HIGH}(3)+${LOW}(1)`;
  const first = await speak(mix);
  assert.equal(first.status, 200);
  const firstBytes = Buffer.from(await first.arrayBuffer());
  assert.equal(first.headers.get('x-cache'), 'miss', 'a mix is not served from its voices\' entries');
  // The same mix written in another order is the same voice: the same cache entry.
  const again = await speak(`${LOW}(1)+${HIGH}(3)`);
  assert.equal(again.headers.get('x-cache'), 'hit');
  assert.ok(Buffer.from(await again.arrayBuffer()).equals(firstBytes));
  // Its loudness is measured for the mix itself, under the mix's own id.
  const engine = server.app.services.engines.get('espeak')!;
  const voice = (await server.app.services.voices.get(mix, org.orgId))!;
  assert.equal(voice.id, `${HIGH}(0.75)+${LOW}(0.25)`.split('+').sort().join('+'));
  const gain = await gainOf(engine, { ...voice, profiles: engine.mixProfiles!(voice.mix!)! });
  assert.ok(gain > 0 && Number.isFinite(gain));
});

test('bad mixes are refused before billing: unknown voices, zero or negative weights, too many voices, an engine that cannot mix', { timeout: 60_000 }, async () => {
  const before = await balance();
  const cases: [string, number, string][] = [
    [`${HIGH}(1)+nobody(1)`, 404, 'voice_not_found'],
    [`${HIGH}(0)+${LOW}(0)`, 400, 'invalid_request'],
    [`${HIGH}(-1)+${LOW}(1)`, 400, 'invalid_request'],
    [NAMED_VOICES.slice(0, 5).map((v) => `${v.id}(1)`).join('+'), 400, 'invalid_request'],
    [`${HIGH}(1)+${HIGH}(2)`, 400, 'invalid_request'],
  ];
  for (const [id, status, code] of cases) {
    const response = await speak(id);
    assert.equal(response.status, status, `${id}: ${await response.clone().text()}`);
    assert.equal(((await response.json()) as { error_code: string }).error_code, code, id);
  }
  const unsupported = await speak(`${HIGH}(1)+${LOW}(1)`, 'tone-any');
  const body = (await unsupported.json()) as { error_code: string; message: string };
  assert.equal(unsupported.status, 400);
  assert.equal(body.error_code, 'voice_mix_unsupported');
  assert.match(body.message, new RegExp(`voice (${HIGH}|${LOW}) cannot be mixed .*the tone engine`));

  for (const voices of [[{ id: HIGH, weight: 0 }], [{ id: HIGH, weight: -2 }, { id: LOW, weight: 1 }], [{ id: 'nobody', weight: 1 }], NAMED_VOICES.slice(0, 5).map((v) => ({ id: v.id, weight: 1 }))]) {
    const response = await server.post('/voices/mix', { name: 'bad', voices }, org.auth);
    assert.ok(response.status === 400 || response.status === 404, `${JSON.stringify(voices)}: ${response.status}`);
  }
  assert.equal(await balance(), before, 'nothing was charged');
});
