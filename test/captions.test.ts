/**
 * Captions end to end: a job's (`GET /tts/jobs/{id}/captions`, whether or not
 * it asked for timestamps, across inputs and speakers), `POST /tts/captioned`
 * (a clip with its captions, billed as `/tts/bytes`), each read by maintained
 * subtitle parsers (webvtt-parser validates the WebVTT), every word sent
 * appearing once, in order, within the audio.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { Stream } from 'openai/core/streaming';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { captionWords, readSrt, readVtt, type ReadCue } from './helpers/captions.js';
import { eventually } from './helpers/redis.js';
import { startServer, type TestServer } from './helpers/server.js';

const T = { timeout: 120_000 };

async function json(response: Response): Promise<any> {
  return response.json();
}

/** Cues lie within the audio, in order, without overlap, and hold at most two lines. */
function assertWithin(cues: readonly ReadCue[], seconds: number): void {
  assert.ok(cues.length > 0);
  cues.forEach((cue, index) => {
    assert.ok(cue.start >= 0 && cue.end > cue.start && cue.end <= Math.round(seconds * 1000) + 1, `cue ${index} ${cue.start}–${cue.end} in ${seconds} s`);
    if (index > 0) assert.ok(cue.start >= cues[index - 1].end, `cue ${index} overlaps the one before`);
    assert.ok(cue.text.split('\n').length <= 2);
  });
}

describe('captions', () => {
  let server: TestServer;
  let org: TestOrg;

  before(async () => {
    server = await startServer({ config: { accounts: { enabled: true }, jobs: { pollMs: 50 } } as never });
    org = await newOrg(server, { credits: 1_000_000 });
  }, T);
  after(() => server?.close());

  async function finished(id: string): Promise<any> {
    let job: any;
    const ok = await eventually(async () => {
      job = await json(await fetch(`${server.url}/tts/jobs/${id}`, { headers: org.auth }));
      return ['succeeded', 'failed'].includes(job.status);
    }, 90_000, 50);
    assert.ok(ok, `job ${id} did not finish: ${JSON.stringify(job)}`);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    return job;
  }

  test('a job that did not ask for timestamps has captions: SRT and WebVTT with the same cues, every word once, in order, within the audio', T, async () => {
    const text =
      'Captions are made from the words spoken. Each cue ends where a sentence ends, and a long sentence, like this one with its many clauses, breaks at a comma. Short? Yes. ' +
      'Tom & Jerry <3 cheese; the rest is <break time="300ms"/> silence.';
    const response = await server.post('/tts/jobs', { model_id: 'omnivoice', voice: 'sarah', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 }, transcript: text }, org.auth);
    assert.equal(response.status, 202, await response.clone().text());
    const job = await finished((await json(response)).id);
    assert.equal(job.result.captions_url, `/tts/jobs/${job.id}/captions`);
    const audio = parseWav(Buffer.from(await (await fetch(`${server.url}${job.result.url}`, { headers: org.auth })).arrayBuffer()));
    const seconds = audio.data.length / 2 / 16000;

    const vttResponse = await fetch(`${server.url}/tts/jobs/${job.id}/captions`, { headers: org.auth });
    assert.equal(vttResponse.status, 200);
    assert.equal(vttResponse.headers.get('content-type'), 'text/vtt; charset=utf-8');
    const vtt = await vttResponse.text();
    assert.match(vtt, /^WEBVTT\n\n/);
    assert.ok(vtt.includes('Tom &amp; Jerry &lt;3'), vtt);
    const srtResponse = await fetch(`${server.url}/tts/jobs/${job.id}/captions?format=srt`, { headers: org.auth });
    assert.equal(srtResponse.headers.get('content-type'), 'application/x-subrip');
    const srt = await srtResponse.text();
    assert.match(srt, /^1\n00:00:00,\d{3} --> /);

    const fromVtt = readVtt(vtt);
    assert.deepEqual(readSrt(srt), fromVtt);
    assertWithin(fromVtt, seconds);
    assert.deepEqual(captionWords(fromVtt), text.replace(/<break[^>]*\/>/, '').split(/\s+/).filter(Boolean));
    assert.ok(fromVtt.some((cue) => cue.text.replace(/\n/g, ' ').endsWith('words spoken.')), 'a sentence ends a cue');
    assert.ok(fromVtt.some((cue) => /^Short\? Yes\./.test(cue.text)), 'sentences shorter than 1 s share a cue');
    for (const cue of fromVtt) for (const line of cue.text.split('\n')) assert.ok(line.length <= 42, line);
    const narrow = readVtt(await (await fetch(`${server.url}/tts/jobs/${job.id}/captions?max_line_chars=20`, { headers: org.auth })).text());
    for (const cue of narrow) for (const line of cue.text.split('\n')) assert.ok(line.length <= 20, line);

    // What the job did not ask for stays out of its timestamps.
    const timings = await json(await fetch(`${server.url}/tts/jobs/${job.id}/timestamps`, { headers: org.auth }));
    assert.deepEqual(timings.word_timestamps.words, []);

    const bad = await fetch(`${server.url}/tts/jobs/${job.id}/captions?format=ass`, { headers: org.auth });
    assert.equal(bad.status, 400);
    assert.equal((await json(bad)).error_code, 'invalid_caption_format');
    const wide = await fetch(`${server.url}/tts/jobs/${job.id}/captions?max_line_chars=200`, { headers: org.auth });
    assert.equal((await json(wide)).error_code, 'invalid_caption_options');
    // Another organisation's job is not found, as its audio is not.
    const other = await newOrg(server, { credits: 1_000 });
    const foreign = await fetch(`${server.url}/tts/jobs/${job.id}/captions`, { headers: other.auth });
    assert.equal(foreign.status, 404);
    assert.equal((await json(foreign)).error_code, 'job_not_found');
    assert.equal((await fetch(`${server.url}/tts/jobs/${job.id}/captions`)).status, 401);
  });

  test('a dialogue job: cues across inputs name their speaker (<v Sarah>, "Michael: ")', T, async () => {
    const response = await server.post(
      '/tts/jobs',
      {
        model_id: 'omnivoice',
        voice: 'sarah',
        output_format: { container: 'mp3', sample_rate: 22050, bit_rate: 64000 },
        inputs: [
          { transcript: 'Welcome back to the show. How was your week?' },
          { transcript: 'Busy, but good. I finally finished the garden.', voice: 'michael' },
          { transcript: 'That is wonderful news!' },
        ],
      },
      org.auth,
    );
    assert.equal(response.status, 202, await response.clone().text());
    const job = await finished((await json(response)).id);
    const vtt = await (await fetch(`${server.url}/tts/jobs/${job.id}/captions?format=vtt`, { headers: org.auth })).text();
    const cues = readVtt(vtt);
    assertWithin(cues, job.result.duration_seconds);
    assert.deepEqual(
      cues.map((cue) => [cue.speaker, cue.text.replace(/\n/g, ' ')]),
      [
        ['Sarah', 'Welcome back to the show.'],
        ['Sarah', 'How was your week?'],
        ['Michael', 'Busy, but good.'],
        ['Michael', 'I finally finished the garden.'],
        ['Sarah', 'That is wonderful news!'],
      ],
    );
    const srt = readSrt(await (await fetch(`${server.url}/tts/jobs/${job.id}/captions?format=srt`, { headers: org.auth })).text());
    assert.deepEqual(srt.map((cue) => [cue.start, cue.end]), cues.map((cue) => [cue.start, cue.end]));
    assert.equal(srt[2].text, 'Michael: Busy, but good.');
  });

  test('a job not finished yet has no captions: 409 job_not_finished', T, async () => {
    const paused = await startServer({ config: { accounts: { enabled: false }, jobs: { concurrency: 0 } } as never });
    try {
      const queued = await json(await paused.post('/tts/jobs', { model_id: 'omnivoice', voice: 'sarah', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 }, transcript: 'Not yet.' }));
      assert.match(queued.id, /^job_/, JSON.stringify(queued));
      const early = await fetch(`${paused.url}/tts/jobs/${queued.id}/captions`);
      assert.equal(early.status, 409);
      assert.equal((await json(early)).error_code, 'job_not_finished');
    } finally {
      await paused.close();
    }
  });

  test('POST /tts/captioned: the clip, its captions and words in one JSON object, charged exactly as /tts/bytes', T, async () => {
    const body = {
      model_id: 'omnivoice',
      voice: 'sarah',
      output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
      transcript: '<speak>Fish &amp; chips, <break time="200ms"/> please. <emphasis>Two</emphasis> &lt;portions&gt; of them.</speak>',
    };
    const ledger = server.app.services.store.ledger;
    const bytes = await server.post('/tts/bytes', body, org.auth);
    assert.equal(bytes.status, 200);
    const clipAudio = Buffer.from(await bytes.arrayBuffer());
    const response = await server.post('/tts/captioned', { ...body, captions: { format: 'srt', maxLineChars: 20 } }, org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('x-request-credits'), bytes.headers.get('x-request-credits'));
    const answer = await json(response);
    assert.equal(answer.content_type, 'audio/wav');
    const audio = Buffer.from(answer.audio, 'base64');
    assert.equal(audio.length, clipAudio.length, 'the same clip as /tts/bytes');
    const seconds = parseWav(audio).data.length / 2 / 22050;
    assert.deepEqual(answer.words.words, ['Fish', '&', 'chips,', 'please.', 'Two', '<portions>', 'of', 'them.']);
    assert.equal(answer.words.start.length, 8);
    assert.ok(answer.words.end.at(-1) <= seconds + 0.001);
    const cues = readSrt(answer.captions);
    assertWithin(cues, seconds);
    assert.deepEqual(captionWords(cues), answer.words.words);
    for (const cue of cues) for (const line of cue.text.split('\n')) assert.ok(line.length <= 20, line);
    // The same body again comes from the audio cache, with the same words and captions.
    const again = await json(await server.post('/tts/captioned', { ...body, captions: { format: 'srt', maxLineChars: 20 } }, org.auth));
    assert.deepEqual([again.words, again.captions, again.audio.length], [answer.words, answer.captions, answer.audio.length]);
    // WebVTT by default: escaped and valid.
    const vtt = await json(await server.post('/tts/captioned', { ...body, cache: false }, org.auth));
    assert.ok(vtt.captions.includes('Fish &amp; chips,'), vtt.captions);
    assert.ok(vtt.captions.includes('&lt;portions&gt;'), vtt.captions);
    assert.deepEqual(captionWords(readVtt(vtt.captions)), answer.words.words);

    const { data } = await ledger.list(org.orgId, { limit: 4 });
    const charges = data.filter((row) => row.kind === 'charge');
    assert.equal(charges.length, 4);
    assert.deepEqual(new Set(charges.map((row) => [row.credits, row.endpoint].join())).size, 1, JSON.stringify(charges));
    assert.equal(charges[0].endpoint, 'tts.bytes');

    for (const [captions, code] of [[{ format: 'ass' }, 'invalid_caption_format'], [{ maxLineChars: 10 }, 'invalid_caption_options'], ['vtt', 'invalid_caption_options']] as const) {
      const refused = await server.post('/tts/captioned', { ...body, captions }, org.auth);
      assert.equal(refused.status, 400);
      assert.equal((await json(refused)).error_code, code);
    }
    const streamed = await server.post('/tts/captioned', { ...body, stream: true }, org.auth);
    assert.equal(streamed.status, 400);
    assert.equal(await ledger.reserved(org.orgId), 0);
  });

  test('OpenAI dialect: stream_format sse with "timestamps": true adds speech.word_timestamps events; the SDK still reads the stream', T, async () => {
    const client = new OpenAI({ apiKey: org.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const input = 'The quick brown fox jumps over the lazy dog. Then it sleeps.';
    const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, response_format: 'pcm', stream_format: 'sse', timestamps: true } as any);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    const events: any[] = [];
    for await (const event of Stream.fromSSEResponse<any>(response, new AbortController())) events.push(event);
    const types = new Set(events.map((event) => event.type));
    assert.deepEqual([...types].sort(), ['speech.audio.delta', 'speech.audio.done', 'speech.word_timestamps']);
    assert.equal(events.at(-1).type, 'speech.audio.done');
    const timed = events.filter((event) => event.type === 'speech.word_timestamps');
    assert.deepEqual(Object.keys(timed[0]).sort(), ['end', 'start', 'type', 'words']);
    const words = timed.flatMap((event) => event.words);
    assert.deepEqual(words, input.split(' '));
    const starts = timed.flatMap((event) => event.start);
    const ends = timed.flatMap((event) => event.end);
    const pcm = Buffer.concat(events.filter((event) => event.type === 'speech.audio.delta').map((event) => Buffer.from(event.audio, 'base64')));
    const seconds = pcm.length / 2 / 24000;
    for (let i = 0; i < words.length; i++) assert.ok(starts[i] <= ends[i] && ends[i] <= seconds + 0.001 && (i === 0 || starts[i] >= starts[i - 1]));
    // Without the extension: no such events; with it but no event stream: a clear 400 through the SDK's error class.
    const plain = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, response_format: 'pcm', stream_format: 'sse' } as any);
    assert.ok(!(await plain.text()).includes('speech.word_timestamps'));
    await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, timestamps: true } as any), (err: any) => err instanceof OpenAI.BadRequestError && err.param === 'timestamps');
  });
});
