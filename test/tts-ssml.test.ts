/**
 * @module test/tts-ssml
 * SSML through every endpoint on a real server with accounts on: examples
 * as the anchors (Polly, Azure, Google, Twilio) document them speak without
 * error; `<break>` adds its silence and `<prosody>` changes the length and
 * level as measured; billing counts the spoken text, not the markup;
 * malformed SSML is 400 `invalid_ssml` with its line and column and nothing
 * on the ledger; a 64 KB body of nested tags is refused quickly; word
 * timestamps name the words of the text content; a WebSocket message is a
 * whole document. `<phoneme>` is spoken as its phonemes and `<lang>` in its
 * language by eSpeak NG, measured against the plain reading; both count
 * their text, name its words, and a `ph` that cannot be read is refused
 * before anything is billed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { levelDbfs } from '../src/voices/loudness.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { longestZeroRun } from './helpers/audio.js';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

const raw = (rate: number) => ({ container: 'raw', encoding: 'pcm_s16le', sample_rate: rate });
const RATE = 22050;

async function clip(transcript: string, extra: Record<string, unknown> = {}): Promise<{ samples: Int16Array; response: Response }> {
  const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE), ...extra }, org.auth);
  assert.equal(response.status, 200, await response.clone().text());
  const bytes = Buffer.from(await response.arrayBuffer());
  return { samples: new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2), response };
}

const level = (samples: Int16Array) => levelDbfs(Float32Array.from(samples, (s) => s / 32767));

async function ledgerRows(orgId: string) {
  return (await server.app.services.accounts!.store.ledger.list(orgId, { limit: 1000 })).data;
}

/** Documented examples, as the anchors' SSML references give them (no `<audio>`, which needs a fetch). */
const ANCHOR_EXAMPLES: Record<string, string> = {
  'Polly: break, emphasis, prosody, say-as, sub': `<speak>
    Mary had a little lamb <break time="3s"/>Whose fleece was white as snow.
    I already told you I <emphasis level="strong">really like</emphasis> that person.
    <prosody volume="+6dB" rate="slow">Sometimes it can be useful to increase the volume and slow down.</prosody>
    <say-as interpret-as="characters">Pennsylvania</say-as> is spelled out.
    My favorite chemical element is <sub alias="aluminium">Al</sub>.
    <amazon:effect name="whispered">If you make any noise, she said, they will hear us.</amazon:effect>
</speak>`,
  'Polly: p, s, mark, lang, phoneme': `<speak><p><s>Mary had a little lamb.</s><s>Whose fleece was white as snow.</s></p>
<p>Please make sure you <mark name="here"/>read the <lang xml:lang="fr-FR">Mon chat</lang> page.</p>
You say, <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>. I say, <phoneme alphabet="x-sampa" ph='pi.kA:n'>pecan</phoneme>.</speak>`,
  'Azure: voice, prosody percentages, break strength': `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="en-US">
    <voice name="en-US-AvaMultilingualNeural">
        <mstts:express-as style="cheerful">Welcome to Microsoft Foundry Tools <break strength="medium"/>Text to speech.</mstts:express-as>
        <prosody rate="+30.00%" volume="+20.00%" pitch="+5%">Enjoy using text to speech.</prosody>
        <prosody volume="x-loud">Welcome.</prosody> <prosody rate="0.5">Slowly.</prosody>
        <say-as interpret-as="date" format="mdy">10/19/2026</say-as> at <say-as interpret-as="time">2:30pm</say-as>.
    </voice>
</speak>`,
  'Google: say-as readings and break': `<speak>
  Here are <say-as interpret-as="characters">SSML</say-as> samples.
  I can pause <break time="3s"/>.
  I can speak in cardinals. Your number is <say-as interpret-as="cardinal">10</say-as>.
  Or I can speak in ordinals. You are <say-as interpret-as="ordinal">10</say-as> in line.
  Or I can even speak in digits. The digits for ten are <say-as interpret-as="characters">10</say-as>.
  I can also substitute phrases, like the <sub alias="World Wide Web Consortium">W3C</sub>.
  Finally, I can speak a paragraph with two sentences.
  <p><s>This is sentence one.</s><s>This is sentence two.</s></p>
  It costs <say-as interpret-as="currency" language="en-US">$42.01</say-as> on <say-as interpret-as="date" format="yyyymmdd" detail="1">19600207</say-as>.
  Call <say-as interpret-as="telephone" format="1">(781) 771-7777</say-as>.
</speak>`,
  'Polly: phoneme in IPA and X-SAMPA': `<speak>
    You say, <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>.
    I say, <phoneme alphabet="x-sampa" ph='pI"kA:n'>pecan</phoneme>.
</speak>`,
  'Polly: lang': `<speak>
    <lang xml:lang="fr-FR">Je ne parle pas français.</lang>
</speak>`,
  'Azure: phoneme and lang': `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US">
    <voice name="en-US-AvaNeural">
        <phoneme alphabet="ipa" ph="təˈmeɪtoʊ"> tomato </phoneme>
        <lang xml:lang="de-DE">Wir freuen uns auf die Zusammenarbeit mit Ihnen!</lang>
    </voice>
</speak>`,
  'Twilio <Say> SSML: break, emphasis, prosody, say-as, w': `<speak>Hi <break strength="x-weak"/> there. <emphasis level="moderate">Hello</emphasis>
<prosody pitch="x-high" rate="fast">Hello again</prosody> <say-as interpret-as="spell-out">Twilio</say-as> <w role="amazon:VBD">read</w> it.</speak>`,
};

describe('SSML: the anchors’ documented examples', () => {
  for (const [name, ssml] of Object.entries(ANCHOR_EXAMPLES)) {
    test(`${name} speaks without error`, { timeout: 30_000 }, async () => {
      const { samples } = await clip(ssml);
      assert.ok(samples.length > RATE, `${samples.length} samples`);
    });
  }

  test('on SSE, the OpenAI endpoint (transcript_type or <speak>) and a WebSocket message', { timeout: 30_000 }, async () => {
    const ssml = ANCHOR_EXAMPLES['Google: say-as readings and break'];
    const sse = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript: ssml, voice: 'sarah', output_format: raw(RATE) }, org.auth);
    assert.equal(sse.status, 200);
    const events = (await sse.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
    assert.equal(events.at(-1).type, 'done');
    const streamed = Buffer.concat(events.filter((e) => e.type === 'chunk').map((e) => Buffer.from(e.data, 'base64')));
    assert.ok(longestZeroRun(new Int16Array(streamed.buffer, streamed.byteOffset, streamed.length / 2)) >= 2.9 * RATE);

    for (const body of [{ input: ssml }, { input: '  <speak>Hello <break time="1s"/> there.</speak>', transcript_type: 'ssml' }]) {
      const openai = await server.post('/v1/audio/speech', { model: 'tts-1', voice: 'nova', response_format: 'pcm', ...body }, org.auth);
      assert.equal(openai.status, 200, await openai.clone().text());
      const pcm = Buffer.from(await openai.arrayBuffer());
      assert.ok(longestZeroRun(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2)) >= 0.98 * 24000);
    }

    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(RATE), context_id: 'ssml-ws', add_timestamps: true };
    socket.send({ ...ctx, transcript: 'Plain text first. ', continue: true });
    socket.send({ ...ctx, transcript: '<speak>Then <break time="1s"/> <say-as interpret-as="cardinal">42</say-as> items.</speak>', continue: true });
    socket.send({ ...ctx, transcript: '', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'ssml-ws');
    const audio = socket.audio('ssml-ws');
    assert.ok(longestZeroRun(new Int16Array(audio.buffer, audio.byteOffset, audio.length / 2)) >= 0.98 * RATE);
    const words = socket.of('ssml-ws', 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['Plain', 'text', 'first.', 'Then', '42', 'items.']);
    socket.close();
  });

  test('transcript_type "text" speaks markup as text with inline tags', { timeout: 20_000 }, async () => {
    // As text, "<speak>" is ordinary text and the <break> is Cartesia's tag.
    const { samples } = await clip('<speak>A <break time="1s"/> B</speak>', { transcript_type: 'text' });
    assert.ok(longestZeroRun(samples) >= 0.98 * RATE);
  });
});

describe('SSML: measured', () => {
  test('a 1 s <break> adds 1 s of silence; strength and <p> pause too', { timeout: 20_000 }, async () => {
    const cut = (await clip('<speak>Hello there.<break time="0s"/>Goodbye now.</speak>')).samples.length;
    const { samples } = await clip('<speak>Hello there.<break time="1s"/>Goodbye now.</speak>');
    assert.ok(Math.abs((samples.length - cut) / RATE - 1) <= 0.02, `${(samples.length - cut) / RATE} s`);
    assert.ok(longestZeroRun(samples) >= 0.98 * RATE);
    const strong = (await clip('<speak>Hello there.<break strength="x-strong"/>Goodbye now.</speak>')).samples.length;
    assert.ok(Math.abs((strong - cut) / RATE - 1) <= 0.02, `x-strong: ${(strong - cut) / RATE} s`);
    const paragraphs = (await clip('<speak><p>Hello there.</p><p>Goodbye now.</p></speak>')).samples.length;
    assert.ok(Math.abs((paragraphs - cut) / RATE - 0.5) <= 0.02, `paragraph: ${(paragraphs - cut) / RATE} s`);
  });

  test('<prosody rate> changes the length of a clip; volume changes its level by the dB asked', { timeout: 20_000 }, async () => {
    const text = 'This sentence is spoken at different speeds and levels for the comparison.';
    const normal = await clip(`<speak>${text}</speak>`);
    const slow = (await clip(`<speak><prosody rate="x-slow">${text}</prosody></speak>`)).samples.length;
    const fast = (await clip(`<speak><prosody rate="150%">${text}</prosody></speak>`)).samples.length;
    assert.ok(slow / normal.samples.length > 1.3, `slow ${slow / normal.samples.length}`);
    assert.ok(fast / normal.samples.length < 0.8, `fast ${fast / normal.samples.length}`);
    const plain = level(normal.samples);
    for (const [volume, db] of [['-6dB', -6], ['soft', -6], ['x-soft', -12], ['+4dB', 4]] as const) {
      const got = level((await clip(`<speak><prosody volume="${volume}">${text}</prosody></speak>`)).samples);
      assert.ok(Math.abs(got - plain - db) < 0.5, `${volume}: ${plain.toFixed(2)} → ${got.toFixed(2)} dB`);
    }
  });

  test('<prosody pitch> raises and lowers the voice on eSpeak NG (median F0 by autocorrelation); a pitch it cannot read is a 400', { timeout: 20_000 }, async () => {
    const text = 'This sentence is spoken at different pitches for the comparison.';
    // The median fundamental of the voiced 40 ms frames: the lag of the autocorrelation's peak between 60 and 500 Hz.
    const medianF0 = (samples: Int16Array) => {
      const frame = Math.round(RATE * 0.04);
      const found: number[] = [];
      for (let at = 0; at + frame * 2 < samples.length; at += frame) {
        let energy = 0;
        for (let i = 0; i < frame; i++) energy += samples[at + i] * samples[at + i];
        if (energy / frame < 500 ** 2) continue;
        let best = 0;
        let bestLag = 0;
        for (let lag = Math.floor(RATE / 500); lag <= Math.ceil(RATE / 60); lag++) {
          let sum = 0;
          for (let i = 0; i < frame; i++) sum += samples[at + i] * samples[at + i + lag];
          if (sum > best) [best, bestLag] = [sum, lag];
        }
        if (best / energy > 0.5) found.push(RATE / bestLag);
      }
      found.sort((a, b) => a - b);
      return found[found.length >> 1];
    };
    const normal = medianF0((await clip(`<speak>${text}</speak>`)).samples);
    const high = medianF0((await clip(`<speak><prosody pitch="x-high">${text}</prosody></speak>`)).samples);
    const low = medianF0((await clip(`<speak><prosody pitch="-4st">${text}</prosody></speak>`)).samples);
    assert.ok(high > normal * 1.1, `x-high ${high.toFixed(0)} Hz vs ${normal.toFixed(0)} Hz`);
    assert.ok(low < normal * 0.92, `-4st ${low.toFixed(0)} Hz vs ${normal.toFixed(0)} Hz`);
    const bad = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript: '<speak><prosody pitch="squeaky">Hi.</prosody></speak>', voice: 'sarah', output_format: raw(RATE) }, org.auth);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error_code: string }).error_code, 'invalid_ssml');
  });

  test('say-as and sub change what is said: the clip differs from the text as written', { timeout: 20_000 }, async () => {
    const spelled = (await clip('<speak><say-as interpret-as="characters">NASA</say-as></speak>')).samples.length;
    const word = (await clip('<speak>NASA</speak>')).samples.length;
    assert.ok(spelled > word * 1.3, `${spelled} vs ${word}`);
    const alias = (await clip('<speak><sub alias="World Wide Web Consortium">W3C</sub></speak>')).samples.length;
    const asWritten = (await clip('<speak>W3C</speak>', { transcript_type: 'ssml' })).samples.length;
    assert.ok(alias > asWritten * 1.3, `${alias} vs ${asWritten}`);
  });
});

describe('SSML: counting and refusals', () => {
  test('billing counts the spoken text with sub aliases, a break as one, not the markup', { timeout: 20_000 }, async () => {
    const ssml = '<speak>\n  <p>Hello   <break time="1s"/> <sub alias="World Wide Web">WWW</sub> &amp; more.</p>\n</speak>';
    const { response } = await clip(ssml);
    // "Hello World Wide Web & more." (28: whitespace runs count as one space, none at the ends) and one for the break.
    assert.equal(response.headers.get('x-request-credits'), String('Hello World Wide Web & more.'.length + 1));
  });

  test('malformed SSML is 400 invalid_ssml with its line and column; nothing is billed', { timeout: 20_000 }, async () => {
    const rowsBefore = (await ledgerRows(org.orgId)).length;
    const balance = (await balanceOf(server, org.orgId)).balance;
    const cases: [string, RegExp][] = [
      ['<speak>\n  Hello <b>world</speak>', /line 2, column \d+/],
      ['<speak>Hi <audio src="https://example.com/a.mp3"/></speak>', /line 1, .*audio/],
      ['<speak><break time="soon"/></speak>', /line 1, .*break/],
      ['<speak><prosody rate="quickly">x</prosody></speak>', /prosody/],
      ['<speak>Hello', /line 1/],
      ['<!DOCTYPE speak [<!ENTITY a "aaaa">]><speak>&a;</speak>', /DOCTYPE/],
    ];
    for (const [transcript, message] of cases) {
      // A document that does not start with <speak> is SSML when the body says so.
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE), transcript_type: 'ssml' }, org.auth);
      assert.equal(response.status, 400, transcript);
      const body = (await response.json()) as Record<string, string>;
      assert.equal(body.error_code, 'invalid_ssml', transcript);
      assert.match(body.message, message);
    }
    const openai = await server.post('/v1/audio/speech', { model: 'tts-1', input: '<speak>oops</spek>', voice: 'nova' }, org.auth);
    assert.equal(openai.status, 400);
    const error = ((await openai.json()) as { error: { code: string; param: string } }).error;
    assert.deepEqual([error.code, error.param], ['invalid_ssml', 'input']);
    const sse = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript: '<speak><p>x</s></speak>', voice: 'sarah', output_format: raw(RATE) }, org.auth);
    assert.equal(sse.status, 400);

    // Nothing reached the ledger: no charge, no reservation left behind.
    assert.equal((await ledgerRows(org.orgId)).length, rowsBefore);
    assert.equal((await balanceOf(server, org.orgId)).balance, balance);

    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(RATE) };
    socket.send({ ...ctx, context_id: 'bad-ssml', transcript: '<speak>Hello <break time="x"/></speak>' });
    const event = await socket.waitFor((e) => e.context_id === 'bad-ssml' && e.type === 'error');
    assert.equal(event.error_code, 'invalid_ssml');
    socket.send({ ...ctx, context_id: 'bad-later', transcript: 'Fine so far. ', continue: true });
    socket.send({ ...ctx, context_id: 'bad-later', transcript: '<speak>Then <b>broken</speak>', continue: true });
    assert.equal((await socket.waitFor((e) => e.context_id === 'bad-later' && e.type === 'error')).error_code, 'invalid_ssml');
    socket.close();
  });

  test('a 64 KB body of nested tags is a 4xx within a second', { timeout: 10_000 }, async () => {
    // Well-formed and unclosed, each about 64 KB: refused for their nesting, not their size.
    const nested = '<speak>' + '<s>'.repeat(9_000) + 'x' + '</s>'.repeat(9_000) + '</speak>';
    const unclosed = '<speak>' + "<prosody rate='fast'>".repeat(2_900);
    for (const transcript of [nested, unclosed]) {
      const started = performance.now();
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE) }, org.auth);
      const elapsed = performance.now() - started;
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error_code: string }).error_code, 'invalid_ssml');
      assert.ok(elapsed < 1000, `${elapsed.toFixed(0)} ms`);
    }
  });
});

describe('SSML: word timestamps name the words of the text content', () => {
  test('sub and say-as are named by what they enclose; entities by their character; markup never', { timeout: 20_000 }, async () => {
    const transcript =
      '<speak><p>The <sub alias="World Wide Web Consortium">W3C</sub> met on <say-as interpret-as="date" format="mdy">12/03/2026</say-as>,</p> AT&amp;T <say-as interpret-as="characters">XQ7</say-as>.<break time="300ms"/>Done!</speak>';
    const response = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE), add_timestamps: true }, org.auth);
    const events = (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
    const timestamps = events.filter((e) => e.type === 'timestamps');
    const words = timestamps.flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['The', 'W3C', 'met', 'on', '12/03/2026,', 'AT&T', 'XQ7.', 'Done!']);
    const starts = timestamps.flatMap((e) => e.word_timestamps.start as number[]);
    for (let i = 1; i < starts.length; i++) assert.ok(starts[i] >= starts[i - 1]);
  });
});

describe('SSML: marks', () => {
  const events = async (transcript: string) => {
    const response = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE) }, org.auth);
    assert.equal(response.status, 200);
    return (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
  };

  test('a request with marks is never answered from the audio cache: the second one reports its marks too', { timeout: 20_000 }, async () => {
    const body = { model_id: 'gepard-1.0', transcript: '<speak>Once.<mark name="m"/> Twice.</speak>', voice: 'sarah', output_format: raw(RATE) };
    for (let i = 0; i < 2; i++) {
      const response = await server.post('/tts/sse', body, org.auth);
      assert.equal(response.headers.get('x-cache'), null, 'not a cacheable request');
      const list = (await response.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
      assert.deepEqual(list.filter((e) => e.type === 'mark_timestamps').flatMap((e) => e.mark_timestamps.marks), ['m'], `request ${i + 1}`);
    }
  });

  test('each mark is reported where it falls in the audio, before the audio that starts there', { timeout: 20_000 }, async () => {
    const list = await events('<speak><mark name="start"/>One two three.<mark name="a"/><break time="1s"/><mark name="b"/>Four.<mark name="end"/></speak>');
    const marks = list.filter((e) => e.type === 'mark_timestamps');
    const names = marks.flatMap((e) => e.mark_timestamps.marks);
    const times = marks.flatMap((e) => e.mark_timestamps.time as number[]);
    assert.deepEqual(names, ['start', 'a', 'b', 'end']);
    const first = (await clip('<speak>One two three.</speak>')).samples.length / RATE;
    const total = Buffer.concat(list.filter((e) => e.type === 'chunk').map((e) => Buffer.from(e.data, 'base64'))).length / 2 / RATE;
    assert.equal(times[0], 0);
    assert.ok(Math.abs(times[1] - first) < 0.02, `a at ${times[1]}, the first words last ${first}`);
    assert.ok(Math.abs(times[2] - times[1] - 1) < 0.002, `${times[2] - times[1]}`);
    assert.ok(Math.abs(times[3] - total) < 0.002, `end at ${times[3]} of ${total}`);
    // The first mark comes before any audio: it opens nothing on its own.
    assert.equal(list[0].type, 'mark_timestamps');
    assert.equal(list[1].type, 'chunk');
  });

  test('on the WebSocket, marks are on the context’s clock', { timeout: 20_000 }, async () => {
    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(RATE), context_id: 'marks' };
    socket.send({ ...ctx, transcript: 'First words here. ', continue: true, flush: true });
    await socket.waitFor((e) => e.type === 'flush_done' && e.context_id === 'marks');
    const before = socket.audio('marks').length / 2 / RATE;
    socket.send({ ...ctx, transcript: '<speak><mark name="second"/>Then more.</speak>', continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'marks');
    const mark = socket.of('marks', 'mark_timestamps')[0];
    assert.deepEqual(mark.mark_timestamps.marks, ['second']);
    assert.ok(Math.abs(mark.mark_timestamps.time[0] - before) < 0.002, `${mark.mark_timestamps.time[0]} vs ${before}`);
    socket.close();
  });
});

/** A clip's brightness: the energy of its first difference over its energy (higher for higher formants: eɪ over ɑː). */
function brightness(samples: Int16Array): number {
  let slope = 0;
  let energy = 0;
  for (let i = 1; i < samples.length; i++) {
    slope += (samples[i] - samples[i - 1]) ** 2;
    energy += samples[i] ** 2;
  }
  return slope / energy;
}

describe('SSML: <phoneme> and <lang> on eSpeak NG', () => {
  test('phonemes decide what is said: eɪ is brighter than ɑː, and each voice’s own reading is the one its accent says', { timeout: 30_000 }, async () => {
    const word = async (ph: string | null, voice: string, alphabet = 'ipa') => (await clip(ph === null ? '<speak>tomato</speak>' : `<speak><phoneme alphabet="${alphabet}" ph='${ph}'>tomato</phoneme></speak>`, { voice })).samples;
    // en-us says təˈmeɪɾoʊ, en-gb-x-rp təˈmɑːtəʊ: the plain word sounds like its accent's IPA, not the other's.
    for (const [voice, own] of [['sarah', 'american'], ['michael', 'american'], ['emma', 'british']] as const) {
      const plain = brightness(await word(null, voice));
      const american = brightness(await word('təˈmeɪtoʊ', voice));
      const british = brightness(await word('t@"mA:t@U', voice, 'x-sampa'));
      assert.ok(american > british * 1.25, `${voice}: eɪ ${american.toFixed(4)} vs ɑː ${british.toFixed(4)}`);
      const same = own === 'american' ? american : british;
      assert.ok(Math.abs(plain / same - 1) < 0.05, `${voice}: the word ${plain.toFixed(4)} vs its ${own} IPA ${same.toFixed(4)}`);
    }
    // The IPA of "hello", in either alphabet, lasts as long as the word.
    const hello = (await clip('<speak>hello</speak>')).samples.length;
    for (const [alphabet, ph] of [['ipa', 'həˈloʊ'], ['x-sampa', 'h@"loU']]) {
      const said = (await clip(`<speak><phoneme alphabet="${alphabet}" ph='${ph}'>hello</phoneme></speak>`)).samples.length;
      assert.ok(Math.abs(said / hello - 1) < 0.03, `${alphabet}: ${said} vs ${hello} samples`);
    }
  });

  test('<lang> speaks in that language’s voice, then the voice’s own again; an unknown language or the voice’s own changes nothing', { timeout: 30_000 }, async () => {
    const length = async (ssml: string, voice: string) => (await clip(ssml, { voice })).samples.length;
    const cases = [
      ['michael', 'fr-FR', 'Je ne parle pas français.', 0.85],
      ['emma', 'fr-FR', 'Je ne parle pas français.', 0.85],
      ['michael', 'de-DE', 'Guten Morgen, wie geht es Ihnen heute?', 0.92],
    ] as const;
    for (const [voice, tag, text, shorter] of cases) {
      // Read as English, the words last longer than in their own language.
      const english = await length(`<speak>${text}</speak>`, voice);
      const own = await length(`<speak><lang xml:lang="${tag}">${text}</lang></speak>`, voice);
      assert.ok(own < english * shorter, `${voice} ${tag}: ${own} vs ${english} samples as English`);
      for (const same of ['tlh', 'en-GB', 'not a tag']) {
        const kept = await length(`<speak><lang xml:lang="${same}">${text}</lang></speak>`, voice);
        assert.ok(Math.abs(kept / english - 1) < 0.01, `${voice} ${same}: ${kept} vs ${english}`);
      }
    }
    // Around the element, the voice is its own again: the parts last what they last alone.
    const mixed = await length('<speak>Hello there <lang xml:lang="fr-FR">bonjour</lang> and goodbye.</speak>', 'michael');
    const parts = (await length('<speak>Hello there</speak>', 'michael')) + (await length('<speak><lang xml:lang="fr-FR">bonjour</lang></speak>', 'michael')) + (await length('<speak>and goodbye.</speak>', 'michael'));
    assert.ok(Math.abs(mixed / parts - 1) < 0.02, `${mixed} vs ${parts} samples`);
  });

  test('a per-language voice named by its language speaks it (espeak-fr-fr is eSpeak’s roa/fr, which set_voice knows by that name only)', { timeout: 20_000 }, async () => {
    const text = '<speak>Je ne parle pas français.</speak>';
    const french = (await clip(text, { voice: 'espeak-fr-fr' })).samples.length;
    const english = (await clip(text, { voice: 'espeak-en-us' })).samples.length;
    assert.ok(french < english * 0.85, `${french} vs ${english} samples`);
  });

  test('billing counts the text, not ph; word timestamps name the client’s words', { timeout: 20_000 }, async () => {
    const ssml = '<speak>You say, <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>. I say <phoneme alphabet="ipa" ph="ˈnjuː ˈjɔːk">New York</phoneme> <lang xml:lang="fr-FR">aujourd’hui</lang>.</speak>';
    const { response } = await clip(ssml);
    assert.equal(response.headers.get('x-request-credits'), String('You say, pecan. I say New York aujourd’hui.'.length));
    const sse = await server.post('/tts/sse', { model_id: 'gepard-1.0', transcript: ssml, voice: 'sarah', output_format: raw(RATE), add_timestamps: true }, org.auth);
    const events = (await sse.text()).split('\n\n').filter(Boolean).map((block) => JSON.parse(block.slice(6)));
    const timestamps = events.filter((e) => e.type === 'timestamps');
    assert.deepEqual(timestamps.flatMap((e) => e.word_timestamps.words), ['You', 'say,', 'pecan.', 'I', 'say', 'New', 'York', 'aujourd’hui.']);
    const starts = timestamps.flatMap((e) => e.word_timestamps.start as number[]);
    for (let i = 1; i < starts.length; i++) assert.ok(starts[i] > starts[i - 1], `word ${i} starts at ${starts[i]}`);
    // A WebSocket message is the same document: after streamed plain text, its words are the client's too.
    const socket = await TestSocket.open(server.url, org.auth);
    const ctx = { model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(RATE), context_id: 'phoneme-ws', add_timestamps: true };
    socket.send({ ...ctx, transcript: 'Streamed first. ', continue: true });
    socket.send({ ...ctx, transcript: ssml, continue: false });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'phoneme-ws');
    const streamed = socket.of('phoneme-ws', 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(streamed, ['Streamed', 'first.', 'You', 'say,', 'pecan.', 'I', 'say', 'New', 'York', 'aujourd’hui.']);
    socket.close();
    // The turn's charge is written just after its done: the next test counts rows from here.
    const characters = 'Streamed first. You say, pecan. I say New York aujourd’hui.'.length;
    const charged = async () => (await ledgerRows(org.orgId)).some((row) => row.endpoint === 'tts.websocket' && row.characters === characters);
    assert.ok(await eventually(charged, 5_000), 'the socket turn is charged');
  });

  test('a ph that cannot be read or an unknown alphabet is 400 invalid_ssml at the element; nothing is billed', { timeout: 20_000 }, async () => {
    const rowsBefore = (await ledgerRows(org.orgId)).length;
    const balance = (await balanceOf(server, org.orgId)).balance;
    const cases: [string, RegExp][] = [
      ['<speak>Bonjour\n  <phoneme alphabet="ipa" ph="bɔ̃ʒuʁ">bonjour</phoneme></speak>', /line 2, column \d+: <phoneme ph="bɔ̃ʒuʁ">: the combining mark U\+0303 is not a phoneme/],
      ['<speak><phoneme alphabet="x-sampa" ph="p#kA:n">pecan</phoneme></speak>', /line 1, .*"#" \(U\+0023\) is not an X-SAMPA symbol/],
      ['<speak><phoneme alphabet="sapi" ph="t ax m ey t ow">tomato</phoneme></speak>', /the alphabet "sapi" is not supported/],
      ['<speak><phoneme>tomato</phoneme></speak>', /needs a ph/],
    ];
    for (const [transcript, message] of cases) {
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript, voice: 'sarah', output_format: raw(RATE) }, org.auth);
      assert.equal(response.status, 400, transcript);
      const body = (await response.json()) as Record<string, string>;
      assert.equal(body.error_code, 'invalid_ssml', transcript);
      assert.match(body.message, message);
    }
    assert.equal((await ledgerRows(org.orgId)).length, rowsBefore);
    assert.equal((await balanceOf(server, org.orgId)).balance, balance);
    const socket = await TestSocket.open(server.url, org.auth);
    socket.send({ model_id: 'gepard-1.0', voice: 'sarah', output_format: raw(RATE), context_id: 'bad-ph', transcript: '<speak><phoneme ph="ʁ">r</phoneme></speak>' });
    assert.equal((await socket.waitFor((e) => e.context_id === 'bad-ph' && e.type === 'error')).error_code, 'invalid_ssml');
    socket.close();
  });

  test('the audio cache answers the same phonemes and language again, and never another’s', { timeout: 20_000 }, async () => {
    const get = async (inner: string) => (await clip(`<speak>Cached ${inner} here.</speak>`)).response.headers.get('x-cache');
    const tomato = '<phoneme ph="təˈmɑːtoʊ">tomato</phoneme>';
    assert.equal(await get(tomato), 'miss');
    assert.equal(await get(tomato), 'hit');
    assert.equal(await get('<phoneme ph="təˈmeɪtoʊ">tomato</phoneme>'), 'miss');
    assert.equal(await get('tomato'), 'miss');
    assert.equal(await get('<lang xml:lang="fr-FR">tomato</lang>'), 'miss');
    assert.equal(await get('<lang xml:lang="de">tomato</lang>'), 'miss');
    assert.equal(await get('<lang xml:lang="de">tomato</lang>'), 'hit');
  });
});
