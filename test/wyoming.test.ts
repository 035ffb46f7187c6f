/**
 * @module test/wyoming
 * The Wyoming listener against a client that frames as the protocol's
 * reference library does (Home Assistant's): `describe` → `info`; one-shot
 * and streamed synthesis in two languages with audio of a plausible length;
 * a 30,000-character one-shot spoken whole; refused requests followed by a
 * good one on the same connection; 32 connections at once with the ledger
 * exact to the character; broken framing that neither crashes nor charges;
 * a stream cut off mid-way, charged what it was sent before its first audio
 * went out (the WebSocket turn's rules); the connection cap, the idle
 * timeout and the drain.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chooseVoice, offeredVoices, resolveVoice } from '../src/api/dialects/wyoming/voices.js';
import { loadConfig } from '../src/config/load.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/poll.js';
import { startServer, type TestServer } from './helpers/server.js';
import { WyomingClient, type ClientEvent } from './helpers/wyoming-client.js';

let server: TestServer;
let port: number;

before(async () => {
  // The key is set by each test (`speakAs`): the listener reads it for each connection it opens.
  server = await startServer({ config: { accounts: { enabled: true }, wyoming: { port: 0, apiKey: 'set-by-each-test' } } });
  port = server.app.wyomingAddress!.port;
});
after(() => server.close());

/** The listener's connections from now on speak as this organisation's key. */
async function speakAs(options: Parameters<typeof newOrg>[1] = {}): Promise<TestOrg> {
  const org = await newOrg(server, options);
  server.app.services.config.wyoming.apiKey = org.key;
  return org;
}

async function charges(orgId: string) {
  return (await server.app.services.accounts!.store.ledger.list(orgId, { limit: 1000 })).data.filter((row) => row.kind === 'charge');
}

/** Polls the ledger (a charge is written as the turn ends) until it holds `characters`, or fails after a bound. */
async function chargedCharacters(orgId: string, characters: number, timeoutMs = 10_000): Promise<number> {
  let sum = 0;
  await eventually(async () => (sum = (await charges(orgId)).reduce((n, row) => n + (row.characters ?? 0), 0)) === characters, timeoutMs, 25);
  return sum;
}

interface Heard {
  events: ClientEvent[];
  audio: Buffer;
  rate: number;
  seconds: number;
}

function heard(events: ClientEvent[]): Heard {
  const chunks = events.filter((e) => e.type === 'audio-chunk');
  for (const chunk of chunks) {
    // Home Assistant reads the format from the first chunk: every chunk carries it.
    assert.equal(chunk.data.width, 2);
    assert.equal(chunk.data.channels, 1);
    assert.equal(chunk.data.rate, chunks[0].data.rate);
  }
  const audio = Buffer.concat(chunks.map((c) => c.payload ?? Buffer.alloc(0)));
  const rate = (chunks[0]?.data.rate as number | undefined) ?? 22050;
  assert.equal(audio.length % 2, 0);
  return { events, audio, rate, seconds: audio.length / (rate * 2) };
}

/** Root mean square of 16-bit PCM, as a fraction of full scale. */
function rms(pcm: Buffer): number {
  let sum = 0;
  const n = pcm.length >> 1;
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(sum / Math.max(1, n)) / 32768;
}

async function oneShot(client: WyomingClient, text: string, voice?: Record<string, unknown>, timeoutMs = 60_000): Promise<Heard> {
  client.send('synthesize', voice ? { text, voice } : { text });
  return heard(await client.until((e) => e.type === 'audio-stop' || e.type === 'error', timeoutMs));
}

async function streamed(client: WyomingClient, chunks: string[], voice?: Record<string, unknown>): Promise<Heard> {
  client.send('synthesize-start', voice ? { voice } : null);
  for (const text of chunks) client.send('synthesize-chunk', { text });
  // As Home Assistant does: the whole text once more, for servers without streaming, then the stop.
  client.send('synthesize', voice ? { text: chunks.join(''), voice } : { text: chunks.join('') });
  client.send('synthesize-stop');
  return heard(await client.until((e) => e.type === 'synthesize-stopped' || e.type === 'error'));
}

test('with accounts on, a Wyoming port without a key fails the start, naming the variable', () => {
  assert.throws(() => loadConfig({ env: { VOICEGATE_WYOMING_PORT: '10200' } }), /VOICEGATE_WYOMING_API_KEY/);
  assert.equal(loadConfig({ env: { VOICEGATE_WYOMING_PORT: '10200', VOICEGATE_ACCOUNTS: 'off' } }).wyoming.port, 10200);
  assert.equal(loadConfig({ env: { VOICEGATE_WYOMING_PORT: '10200', VOICEGATE_WYOMING_API_KEY: 'vg_x' } }).wyoming.apiKey, 'vg_x');
  assert.equal(loadConfig({ env: {} }).wyoming.port, null, 'off by default');
});

const types = (events: ClientEvent[]) => events.map((e) => e.type).filter((t) => t !== 'audio-chunk');

test('describe answers info within 1 s: one TTS program, every voice once, BCP-47 languages, the organisation’s own voices', { timeout: 30_000 }, async () => {
  const org = await speakAs();
  const mixed = await server.post('/voices/mix', { name: 'Halfway', voices: [{ id: 'sarah', weight: 1 }, { id: 'michael', weight: 1 }] }, org.auth);
  assert.equal(mixed.status, 201);
  const mixId = ((await mixed.json()) as { id: string }).id;
  const client = await WyomingClient.connect(port);
  const started = performance.now();
  client.send('describe');
  const info = (await client.next(1000))!;
  assert.ok(performance.now() - started < 1000);
  assert.equal(info.type, 'info');
  // Large data travels in the data block: the header line stays far below asyncio's 64 KiB line limit.
  assert.ok(info.headerBytes < 1024, `header line of ${info.headerBytes} bytes`);
  for (const list of ['asr', 'handle', 'intent', 'wake', 'mic', 'snd']) assert.deepEqual(info.data[list], []);
  const programs = info.data.tts as Record<string, unknown>[];
  assert.equal(programs.length, 1);
  const [tts] = programs;
  assert.equal(tts.installed, true);
  assert.equal(tts.supports_synthesize_streaming, true);
  assert.equal(tts.version, server.app.services.version);
  assert.equal(typeof (tts.attribution as Record<string, unknown>).name, 'string');
  assert.equal(typeof (tts.attribution as Record<string, unknown>).url, 'string');
  const voices = tts.voices as { name: string; installed: boolean; languages: string[]; description: string | null; speakers: unknown; attribution: unknown }[];
  const names = voices.map((v) => v.name);
  assert.equal(new Set(names).size, names.length, 'names are unique');
  assert.ok(names.includes('sarah') && names.includes('omnivoice/sarah') && names.includes('voicegate-1.0/sarah'), 'a voice on each model');
  assert.ok(names.includes(mixId), 'the organisation’s mixed voice is offered');
  assert.ok(names.includes('espeak-de'));
  for (const voice of voices) {
    assert.equal(voice.installed, true);
    assert.ok(voice.languages.length >= 1);
    for (const language of voice.languages) assert.match(language, /^[a-z]{2,8}(-[A-Za-z0-9]+)*$/, `${voice.name}: ${language}`);
    assert.equal(typeof voice.description, 'string');
    assert.equal(voice.speakers, null);
    assert.ok(voice.attribution);
  }
  assert.deepEqual(voices.find((v) => v.name === 'espeak-en-us')?.languages, ['en-US']);
  client.close();

  // A synthesize looks up only the voice it names: the same voice on the same model as the list says.
  const { services } = server.app;
  const caller = await services.gate.authenticate(org.key, { address: '127.0.0.1' });
  const offered = await offeredVoices(services, caller);
  for (const voice of offered) {
    const resolved = await resolveVoice(services, caller, { name: voice.name });
    assert.deepEqual([resolved.model.id, resolved.voice.id], [voice.model.id, voice.voice.id], voice.name);
  }
  const byDefault = await resolveVoice(services, caller, {});
  assert.deepEqual([byDefault.name, byDefault.model.id], [chooseVoice(offered, {}).name, chooseVoice(offered, {}).model.id]);
  await assert.rejects(resolveVoice(services, caller, { name: 'gepard-1.0/sarah' }), /voice gepard-1.0\/sarah does not exist/);

  // Another organisation's key is not offered this one's voice.
  await speakAs();
  const other = await WyomingClient.connect(port);
  other.send('describe');
  const otherInfo = (await other.next(1000))!;
  assert.ok(!((otherInfo.data.tts as { voices: { name: string }[] }[])[0].voices.some((v) => v.name === mixId)));
  other.close();
});

test('one-shot synthesis in two languages: one audio-start, chunks with their format, one audio-stop; audio of a plausible length; charged exactly', { timeout: 60_000 }, async () => {
  const org = await speakAs();
  const client = await WyomingClient.connect(port);
  const english = 'Hello there. The weather is lovely today, and the garden is in bloom.';
  const en = await oneShot(client, english);
  assert.deepEqual(types(en.events), ['audio-start', 'audio-stop']);
  assert.deepEqual(en.events[0].data, { rate: 22050, width: 2, channels: 1 });
  assert.ok(en.seconds > english.length * 0.03 && en.seconds < english.length * 0.15, `${en.seconds} s for ${english.length} characters`);
  assert.ok(rms(en.audio) > 0.01, 'the audio is not silence');
  const german = 'Guten Morgen. Das Wetter ist heute sehr schön, und der Garten blüht.';
  const de = await oneShot(client, german, { language: 'de_DE' });
  assert.deepEqual(types(de.events), ['audio-start', 'audio-stop']);
  assert.ok(de.seconds > german.length * 0.03 && de.seconds < german.length * 0.15, `${de.seconds} s for ${german.length} characters`);
  // A voice by name, the name overriding the language (as the reference library says).
  const named = await oneShot(client, 'Good evening.', { name: 'voicegate-1.0/emma', language: 'de' });
  assert.deepEqual(types(named.events), ['audio-start', 'audio-stop']);
  assert.ok(named.seconds > 0.3);
  client.close();
  const total = [...english].length + [...german].length + 'Good evening.'.length;
  assert.equal(await chargedCharacters(org.orgId, total), total);
  const rows = await charges(org.orgId);
  assert.equal(rows.length, 3, 'a text of up to 1,000 characters is one charge');
  assert.ok(rows.every((row) => row.endpoint === 'tts.wyoming' && row.keyId === org.keyId));
  assert.deepEqual(rows.map((r) => r.model).sort(), ['gepard-1.0', 'gepard-1.0', 'voicegate-1.0']);
  const { balance, sum } = await balanceOf(server, org.orgId);
  assert.equal(balance, sum);
  assert.equal(balance, 100_000 - total);
});

test('streamed synthesis in two languages: each sentence its own group as soon as it is complete, the compat synthesize not spoken again, then synthesize-stopped', { timeout: 60_000 }, async () => {
  const org = await speakAs();
  const client = await WyomingClient.connect(port);
  const chunks = ['Hello there. ', 'How are ', 'you today? I hope ', 'all is well.'];
  const en = await streamed(client, chunks);
  assert.deepEqual(types(en.events), ['audio-start', 'audio-stop', 'audio-start', 'audio-stop', 'audio-start', 'audio-stop', 'synthesize-stopped']);
  const whole = await oneShot(client, chunks.join(''));
  assert.ok(Math.abs(en.seconds - whole.seconds) < whole.seconds * 0.2, `streamed ${en.seconds} s, one-shot ${whole.seconds} s`);
  const de = await streamed(client, ['Guten Tag. ', 'Wie geht es ', 'Ihnen?'], { language: 'de-DE' });
  assert.deepEqual(types(de.events), ['audio-start', 'audio-stop', 'audio-start', 'audio-stop', 'synthesize-stopped']);
  assert.ok(de.seconds > 1 && de.seconds < 6, `${de.seconds} s`);
  // An empty stream: only synthesize-stopped.
  client.send('synthesize-start');
  client.send('synthesize-stop');
  assert.deepEqual(types(await client.until((e) => e.type === 'synthesize-stopped')), ['synthesize-stopped']);
  client.close();
  const total = chunks.join('').length * 2 + 'Guten Tag. Wie geht es Ihnen?'.length;
  assert.equal(await chargedCharacters(org.orgId, total), total);
});

test('the first sentence of a stream is heard before the stream’s text is complete', { timeout: 30_000 }, async () => {
  await speakAs();
  const client = await WyomingClient.connect(port);
  client.send('synthesize-start');
  client.send('synthesize-chunk', { text: 'The first sentence is complete. The second one is not' });
  const first = await client.until((e) => e.type === 'audio-stop', 10_000);
  assert.deepEqual(types(first), ['audio-start', 'audio-stop']);
  client.send('synthesize-chunk', { text: ' yet, but now it is.' });
  client.send('synthesize-stop');
  assert.deepEqual(types(await client.until((e) => e.type === 'synthesize-stopped')), ['audio-start', 'audio-stop', 'synthesize-stopped']);
  client.close();
});

test('a 30,000-character one-shot is spoken whole, sentence by sentence, and charged exactly', { timeout: 300_000 }, async () => {
  const org = await speakAs();
  const sentences = ['The river ran quietly past the old mill.', 'Children played in the meadow until dusk.', 'A bell rang twice from the tower on the hill.'];
  let text = '';
  for (let i = 0; [...text].length < 30_000; i++) text += sentences[i % 3] + ' ';
  text = text.slice(0, 30_000);
  assert.equal([...text].length, 30_000);
  const client = await WyomingClient.connect(port);
  const sample = await oneShot(client, sentences.join(' ') + ' ');
  const perCharacter = sample.seconds / (sentences.join(' ').length + 1);
  const long = await oneShot(client, text, undefined, 280_000);
  assert.deepEqual(types(long.events), ['audio-start', 'audio-stop']);
  const expected = perCharacter * 30_000;
  assert.ok(Math.abs(long.seconds - expected) < expected * 0.15, `${long.seconds.toFixed(0)} s of audio, ${expected.toFixed(0)} s expected`);
  client.close();
  const total = 30_000 + sentences.join(' ').length + 1;
  assert.equal(await chargedCharacters(org.orgId, total), total);
  const rows = await charges(org.orgId);
  assert.equal(rows.filter((r) => r.characters === 1000).length, 30, 'the long text in 1,000-character batches');
});

test('refused requests get an error with a code, then the same connection serves a good one; nothing refused is charged', { timeout: 60_000 }, async () => {
  const org = await speakAs();
  const client = await WyomingClient.connect(port);
  client.send('synthesize', { text: 'Hello.', voice: { name: 'nobody' } });
  assert.deepEqual((await client.next())!.data, { text: 'voice nobody does not exist or is not visible to your organization', code: 'voice_not_found' });
  client.send('synthesize', { text: 'Hello.', voice: { language: 'xx-YY' } });
  assert.equal((await client.next())!.data.code, 'voice_not_found');
  client.send('synthesize', { voice: { name: 'sarah' } });
  assert.equal((await client.next())!.data.code, 'invalid_message');
  client.send('synthesize', { text: 'a'.repeat(100_001) });
  const tooLong = (await client.next())!;
  assert.equal(tooLong.data.code, 'input_too_long');
  // An unknown event is ignored, and a ping answered.
  client.send('bogus', { anything: 1 });
  client.send('ping', { text: 'x' });
  assert.deepEqual([(await client.next())!.type], ['pong']);
  // A stream whose start is refused: its chunks and the compat synthesize are not spoken.
  client.send('synthesize-start', { voice: { name: 'nobody' } });
  client.send('synthesize-chunk', { text: 'Not spoken. ' });
  client.send('synthesize', { text: 'Not spoken. ' });
  client.send('synthesize-stop');
  assert.equal((await client.next())!.data.code, 'voice_not_found');
  // The stream still ends as a streaming client (Home Assistant) waits for it to.
  assert.deepEqual((await client.next())!.type, 'synthesize-stopped');
  const good = await oneShot(client, 'Now it works.');
  assert.deepEqual(types(good.events), ['audio-start', 'audio-stop']);
  assert.ok(good.seconds > 0.3);
  client.close();
  assert.equal(await chargedCharacters(org.orgId, 13), 13);

  // A client that sends nothing after an error, as Home Assistant (which reads on until audio-stop
  // or the close), sees the connection close within a few seconds instead of waiting for ever.
  const waiting = await WyomingClient.connect(port);
  waiting.send('synthesize', { text: 'Hello.', voice: { name: 'nobody' } });
  const waitedFrom = performance.now();
  assert.equal((await waiting.next())!.data.code, 'voice_not_found');
  assert.equal(await waiting.next(5000), null);
  assert.ok(performance.now() - waitedFrom < 4000);

  // Out of credits: an error, nothing charged, and the connection still answers describe.
  const poor = await speakAs({ credits: 0 });
  const second = await WyomingClient.connect(port);
  second.send('synthesize', { text: 'Hello.' });
  assert.equal((await second.next())!.data.code, 'insufficient_credits');
  second.send('describe');
  assert.equal((await second.next())!.type, 'info');
  second.close();
  assert.deepEqual(await balanceOf(server, poor.orgId), { balance: 0, sum: 0 });

  // A key without the tts scope, and one limited to other networks.
  const scoped = await speakAs();
  await server.app.services.accounts!.admin.updateKey(scoped.keyId, { scopes: ['voices:read'] });
  const third = await WyomingClient.connect(port);
  third.send('synthesize', { text: 'Hello.' });
  assert.equal((await third.next())!.data.code, 'insufficient_scope');
  await server.app.services.accounts!.admin.updateKey(scoped.keyId, { scopes: null, allowed_networks: ['10.0.0.0/8'] });
  third.send('synthesize', { text: 'Hello.' });
  assert.equal((await third.next())!.data.code, 'network_not_allowed');
  await server.app.services.accounts!.admin.updateKey(scoped.keyId, { allowed_networks: null });
  assert.ok((await oneShot(third, 'Allowed again.')).seconds > 0.3);
  third.close();
  assert.equal(await chargedCharacters(scoped.orgId, 14), 14);
});

test('32 connections at once: every one served, the ledger exact to the character', { timeout: 120_000 }, async () => {
  const org = await speakAs();
  const texts = Array.from({ length: 32 }, (_, i) => `Request number ${i + 1} is here. ${'And more words. '.repeat(i % 4)}`);
  const results = await Promise.all(
    texts.map(async (text, i) => {
      const client = await WyomingClient.connect(port);
      try {
        return i % 2 === 0 ? await oneShot(client, text, undefined, 110_000) : await streamed(client, [text.slice(0, 10), text.slice(10)]);
      } finally {
        client.close();
      }
    }),
  );
  for (const result of results) {
    assert.ok(!result.events.some((e) => e.type === 'error'), JSON.stringify(result.events.find((e) => e.type === 'error')?.data));
    assert.ok(result.seconds > 0.5);
  }
  const total = texts.reduce((n, t) => n + [...t].length, 0);
  assert.equal(await chargedCharacters(org.orgId, total), total);
  assert.equal((await charges(org.orgId)).length, 32);
  const { balance, sum } = await balanceOf(server, org.orgId);
  assert.equal(balance, sum);
  assert.equal(balance, 100_000 - total);
});

test('broken framing gets at most one error and a close within 5 s, never a crash or a charge; other connections go on', { timeout: 60_000 }, async () => {
  const org = await speakAs();
  const bystander = await WyomingClient.connect(port);
  const cases: [string, Buffer | string, string | null][] = [
    ['garbage header', 'this is not json\n', 'invalid_message'],
    ['huge data_length', '{"type": "synthesize", "data_length": 99999999999}\n', 'payload_too_large'],
    ['huge payload_length', '{"type": "audio-chunk", "payload_length": 50000000}\n', 'payload_too_large'],
    ['a data block that is not JSON', '{"type": "synthesize", "data_length": 10}\n0123456789', 'invalid_message'],
    ['a header line without end', '{"type": "' + 'x'.repeat(70_000), 'invalid_message'],
    ['a header without type', '{"data": {"text": "Hi."}}\n', 'invalid_message'],
  ];
  for (const [name, bytes, code] of cases) {
    const client = await WyomingClient.connect(port);
    const started = performance.now();
    client.sendRaw(bytes);
    const events = await client.until(() => false, 5000);
    await client.closed;
    assert.ok(performance.now() - started < 5000, `${name}: closed in time`);
    assert.ok(events.length <= 1, `${name}: at most one event`);
    assert.equal(events[0]?.type, 'error', name);
    assert.equal(events[0]?.data.code, code, name);
  }
  // A truncated payload and a truncated data block: the client leaves; nothing happens.
  for (const bytes of ['{"type": "synthesize", "data_length": 40}\n{"text": "Hel', '{"type": "x", "payload_length": 100}\n\x00\x01']) {
    const client = await WyomingClient.connect(port);
    client.sendRaw(bytes);
    client.destroy();
    await client.closed;
  }
  // A request, then garbage in the same connection: the request's answer, the error, the close.
  const mixed = await WyomingClient.connect(port);
  mixed.send('synthesize', { text: 'Before the garbage.' });
  const first = await mixed.until((e) => e.type === 'audio-stop');
  assert.deepEqual(types(first), ['audio-start', 'audio-stop']);
  mixed.sendRaw('}{\n');
  assert.equal((await mixed.next())?.data.code, 'invalid_message');
  assert.equal(await mixed.next(), null);
  // The bystander is served throughout.
  bystander.send('describe');
  assert.equal((await bystander.next())!.type, 'info');
  bystander.close();
  assert.equal(await chargedCharacters(org.orgId, 19), 19);
  assert.equal((await charges(org.orgId)).length, 1, 'only the good request is charged');

  // Garbage in the middle of a one-shot's audio: its audio stops, one error, the close.
  const midway = await WyomingClient.connect(port);
  midway.send('synthesize', { text: 'A long text to speak. '.repeat(100) });
  assert.equal((await midway.next())!.type, 'audio-start');
  const cutAt = performance.now();
  midway.sendRaw('garbage\n');
  const rest = await midway.until((e) => e.type === 'error', 5000);
  assert.ok(rest.every((e) => e.type === 'audio-chunk' || e.type === 'error'), types(rest).join());
  assert.equal(rest.at(-1)!.data.code, 'invalid_message');
  assert.equal(await midway.next(5000), null);
  assert.ok(performance.now() - cutAt < 5000);
});

test('a stream cut off mid-way is charged what it was sent once its audio had begun, and nothing before', { timeout: 60_000 }, async () => {
  const org = await speakAs();
  // Cut before any audio: nothing.
  const early = await WyomingClient.connect(port);
  early.send('synthesize-start');
  early.send('synthesize-chunk', { text: 'This sentence is never finished' });
  await new Promise((resolve) => setTimeout(resolve, 100));
  early.destroy();
  await early.closed;
  // Cut after its first audio: the text received so far (1,500 characters: two batches), exactly.
  const sentence = 'The quick brown fox jumps over the lazy dog again. ';
  let text = '';
  while (text.length + sentence.length <= 1500) text += sentence;
  text = text + 'x'.repeat(1500 - text.length);
  assert.equal(text.length, 1500);
  const cut = await WyomingClient.connect(port);
  cut.send('synthesize-start');
  cut.send('synthesize-chunk', { text });
  const heardSoFar = await cut.until((e) => e.type === 'audio-chunk', 10_000);
  assert.equal(heardSoFar.at(-1)!.type, 'audio-chunk');
  cut.destroy();
  await cut.closed;
  assert.equal(await chargedCharacters(org.orgId, 1500), 1500);
  // The ledger stays at that: nothing more is charged for the rest that was never spoken.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await charges(org.orgId)).reduce((n, r) => n + (r.characters ?? 0), 0), 1500);
  const { balance, sum } = await balanceOf(server, org.orgId);
  assert.equal(balance, sum);
});

test('connections over the cap get too_many_connections and a close; idle ones close; a drain lets the synthesis under way finish', { timeout: 60_000 }, async () => {
  const small = await startServer({ config: { wyoming: { port: 0, maxConnections: 2, idleTimeoutMs: 1000 }, metrics: { public: true } } });
  try {
    const wyomingPort = small.app.wyomingAddress!.port;
    const a = await WyomingClient.connect(wyomingPort);
    const b = await WyomingClient.connect(wyomingPort);
    const over = await WyomingClient.connect(wyomingPort);
    assert.equal((await over.next())!.data.code, 'too_many_connections');
    assert.equal(await over.next(), null);
    // Idle connections close after the timeout.
    const started = performance.now();
    assert.equal(await a.next(5000), null);
    assert.ok(performance.now() - started >= 900);
    await b.closed;

    const ready = await fetch(`${small.url}/readyz`);
    assert.deepEqual(((await ready.json()) as { wyoming: unknown }).wyoming, { port: wyomingPort, connections: 0 });
    const open = await WyomingClient.connect(wyomingPort);
    open.send('ping');
    assert.equal((await open.next())!.type, 'pong');
    const metrics = await (await fetch(`${small.url}/metrics`)).text();
    assert.match(metrics, /^voicegate_wyoming_connections 1$/m);
    assert.match(metrics, /^voicegate_wyoming_listening 1$/m);
    open.close();
    await open.closed;

    // A drain: the synthesis under way is answered whole, then the connection closes; no new one is accepted.
    const busy = await WyomingClient.connect(wyomingPort);
    busy.send('synthesize', { text: 'A sentence spoken while the server drains. And another one after it.' });
    assert.equal((await busy.next())!.type, 'audio-start');
    small.app.drain(0);
    const rest = await busy.until((e) => e.type === 'audio-stop');
    assert.equal(rest.at(-1)!.type, 'audio-stop');
    assert.equal(await busy.next(), null);
    await assert.rejects(WyomingClient.connect(wyomingPort));
    assert.equal((await fetch(`${small.url}/readyz`)).status, 503);
  } finally {
    await small.close();
  }
});
