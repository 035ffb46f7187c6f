/**
 * Long-form jobs end to end on one server (SQLite): a 50,000-character job
 * billed once, stitched results in every container, timings, Range, events,
 * cancel, retention, idempotent submits, and bad input refused with nothing
 * held or charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { diagnostics } from '../src/synthesis/diagnostics.js';
import { verifyWebhook } from '../src/webhooks/signature.js';
import { ToneEngine } from '../src/engines/tone/engine.js';
import { ApiError } from '../src/errors/api-error.js';
import { join } from 'node:path';
import { decodeToFloat } from '../src/audio/decode.js';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { startServer, tempDataDir, type TestServer } from './helpers/server.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';

const T = { timeout: 120_000 };
const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];

/** Plain sentences of about `characters` code points (no numbers: the normaliser leaves them as they are). */
function prose(characters: number): string {
  const sentences: string[] = [];
  let length = 0;
  for (let i = 0; length < characters; i++) {
    const sentence = `The ${WORDS[i % 10]} and the ${WORDS[(i * 7 + 3) % 10]} rest by the ${WORDS[(i * 3 + 1) % 10]}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
    if (i % 12 === 11) sentences.push('\n\n');
  }
  return sentences.join(' ').slice(0, characters).trim();
}

async function json(response: Response): Promise<any> {
  return response.json();
}

async function waitFor(server: TestServer, id: string, auth: Record<string, string>, statuses: string[], withinMs = 90_000): Promise<any> {
  let job: any;
  const ok = await eventually(async () => {
    job = await json(await fetch(`${server.url}/tts/jobs/${id}`, { headers: auth }));
    if (!statuses.includes(job.status)) return false;
    // A failed or cancelled job is shown ended a moment before its hold is released: the books are read after both.
    return !['succeeded', 'failed', 'cancelled'].includes(job.status) || (await server.app.services.store.jobs.get(id))?.billing !== 'held';
  }, withinMs, 50);
  assert.ok(ok, `job ${id} reached ${statuses.join('/')}; last seen ${JSON.stringify(job)}`);
  return job;
}

describe('long-form jobs', () => {
  let server: TestServer;
  let org: TestOrg;
  let dataDir: string;
  const submit = (body: Record<string, unknown>, headers: Record<string, string> = org.auth) => server.post('/tts/jobs', body, headers);
  const body = (overrides: Record<string, unknown> = {}) => ({
    model_id: 'tone-jobs',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 },
    transcript: 'A short job about the river and the stone.',
    ...overrides,
  });

  before(async () => {
    dataDir = tempDataDir();
    server = await startServer({
      config: {
        dataDir,
        accounts: { enabled: true },
        engines: { espeak: { type: 'espeak', workers: 2 }, tone8k: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
        models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone8k' } },
        jobs: { pollMs: 50, maxQueuedPerOrg: 4, maxCharacters: 60_000, retentionHours: 1 },
      },
    });
    org = await newOrg(server, { credits: 1_000_000 });
  }, T);
  after(() => server?.close());

  test('a 50,000-character job succeeds: audio of the expected length and one charge row of 50,000 credits', T, async () => {
    const text = prose(50_000);
    assert.equal([...text].length, 50_000);
    const response = await submit(body({ transcript: text }));
    assert.equal(response.status, 202, await response.clone().text());
    assert.equal(response.headers.get('x-request-credits'), '50000');
    const submitted = await json(response);
    assert.match(submitted.id, /^job_[0-9a-f]{24}$/);
    assert.equal(response.headers.get('location'), `/tts/jobs/${submitted.id}`);
    assert.equal(submitted.characters, 50_000);
    assert.ok(submitted.progress.segments_total >= 50, `segments: ${submitted.progress.segments_total}`);
    const job = await waitFor(server, submitted.id, org.auth, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.equal(job.progress.segments_done, job.progress.segments_total);
    assert.equal(job.progress.characters_done, 50_000);
    const audio = Buffer.from(await (await fetch(`${server.url}${job.result.url}`, { headers: org.auth })).arrayBuffer());
    assert.equal(audio.length, job.result.bytes);
    const wav = parseWav(audio);
    assert.equal(wav.sampleRate, 8000);
    const seconds = wav.data.length / 2 / 8000;
    assert.ok(Math.abs(seconds - job.result.duration_seconds) < 0.001);
    // The tone engine speaks 10 ms a character; segments lose only the spaces they were cut at.
    assert.ok(Math.abs(seconds - 500) < 5, `duration ${seconds} s`);
    const ledger = await server.app.services.store.ledger.list(org.orgId, { limit: 100 });
    const charges = ledger.data.filter((row) => row.kind === 'charge');
    assert.equal(charges.length, 1);
    assert.equal(charges[0].credits, -50_000);
    assert.equal(charges[0].chargeKey, job.id);
    assert.equal(charges[0].endpoint, 'tts.jobs');
    assert.equal(await server.app.services.store.ledger.reserved(org.orgId), 0, 'no hold left');
    // Only the result and its timings stay: the segments are removed once it exists.
    assert.deepEqual(readdirSync(join(dataDir, 'jobs', job.id)).sort(), ['result', 'timestamps.json']);
    await fetch(`${server.url}/tts/jobs/${job.id}`, { method: 'DELETE', headers: org.auth });
  });

  test('inputs are spoken in order with a pause between them; mp3 stitched as one stream; word timings on the result clock', T, async () => {
    const response = await submit({
      model_id: 'gepard-1.0',
      voice: { mode: 'id', id: 'sarah' },
      output_format: { container: 'mp3', sample_rate: 22050, bit_rate: 64000 },
      add_timestamps: true,
      inputs: [{ transcript: 'The first part is short.' }, { transcript: 'The second part follows it after a pause.' }],
    });
    assert.equal(response.status, 202, await response.clone().text());
    const job = await waitFor(server, (await json(response)).id, org.auth, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.equal(job.result.content_type, 'audio/mpeg');
    const audio = Buffer.from(await (await fetch(`${server.url}${job.result.url}`, { headers: org.auth })).arrayBuffer());
    const decoded = await decodeToFloat(audio, { container: 'mp3', sampleRate: 22050, bitRate: 64000 } as never);
    const seconds = decoded.samples.length / 22050;
    assert.ok(Math.abs(seconds - job.result.duration_seconds) < 0.15, `decoded ${seconds} s, result says ${job.result.duration_seconds}`);
    const timings = await json(await fetch(`${server.url}/tts/jobs/${job.id}/timestamps`, { headers: org.auth }));
    const { words, start, end } = timings.word_timestamps;
    assert.deepEqual(words.slice(0, 2), ['The', 'first']);
    assert.ok(words.includes('second'));
    for (let i = 1; i < start.length; i++) assert.ok(start[i] >= start[i - 1] && end[i] >= start[i]);
    // The second input's first word starts after the one-second pause.
    const second = words.indexOf('The', 1);
    assert.ok(start[second] - end[second - 1] >= 0.95, `gap ${start[second] - end[second - 1]}`);
  });

  test('a job is made through synthesis sessions: each segment publishes its events as background work, and a repeated segment is served from the cache', T, async () => {
    const events: { channel: string; event: any }[] = [];
    const listeners = (['admitted', 'end'] as const).map((name) => {
      const listener = (event: unknown) => events.push({ channel: name, event });
      subscribe(diagnostics[name].name as string, listener);
      return () => unsubscribe(diagnostics[name].name as string, listener);
    });
    const cache = server.app.services.cache!.store;
    const hits = cache.hits + cache.followers;
    try {
      const line = 'The same line, spoken twice by the lantern in the meadow.';
      const response = await submit(body({ transcript: undefined, inputs: [{ transcript: line }, { transcript: line }, { transcript: 'And one more, new.' }] }));
      assert.equal(response.status, 202, await response.clone().text());
      const { id } = await json(response);
      const job = await waitFor(server, id, org.auth, ['succeeded', 'failed']);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      const mine = (channel: string) => events.filter((e) => e.channel === channel && String(e.event.requestId).startsWith(`${id}/`)).map((e) => e.event);
      assert.deepEqual(mine('admitted').map((e) => [e.requestId, e.endpoint, e.background, e.orgId]), [0, 1, 2].map((i) => [`${id}/${i}`, 'tts.jobs', true, org.orgId]));
      assert.deepEqual(mine('end').map((e) => [e.requestId, e.transport, e.status, e.charactersCharged]), [0, 1, 2].map((i) => [`${id}/${i}`, 'job', 200, 0]));
      assert.ok(mine('end').every((e) => e.audioSeconds > 0), 'each segment reports the audio it made');
      assert.equal(cache.hits + cache.followers - hits, 1, 'the repeated segment came from the cache');
      // /concurrency shows jobs apart from requests (counted as src/concurrency/activity.test.ts shows).
      const view = await json(await fetch(`${server.url}/concurrency`, { headers: org.auth }));
      assert.deepEqual(view.tts_jobs, { active: 0, limit: server.app.services.config.jobs.maxRunningPerOrg });
    } finally {
      for (const stop of listeners) stop();
    }
  });

  test('an SSML input with <phoneme> and <lang> is one segment: counted by its text, its words timed', T, async () => {
    const ssml = '<speak>You say <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>, <lang xml:lang="fr-FR">je dis noix</lang>.</speak>';
    const response = await submit({ ...body({ transcript: undefined }), model_id: 'gepard-1.0', add_timestamps: true, inputs: [{ transcript: 'First plain text.' }, { transcript: ssml, transcript_type: 'ssml' }] });
    assert.equal(response.status, 202, await response.clone().text());
    const submitted = await json(response);
    assert.equal(submitted.characters, 'First plain text.'.length + 'You say pecan, je dis noix.'.length);
    assert.equal(submitted.progress.segments_total, 2);
    const job = await waitFor(server, submitted.id, org.auth, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const { words } = (await json(await fetch(`${server.url}/tts/jobs/${job.id}/timestamps`, { headers: org.auth }))).word_timestamps;
    assert.deepEqual(words, ['First', 'plain', 'text.', 'You', 'say', 'pecan,', 'je', 'dis', 'noix.']);
    await fetch(`${server.url}/tts/jobs/${job.id}`, { method: 'DELETE', headers: org.auth });
  });

  test('Range answers part of the result; before success the audio is 409 job_not_finished', T, async () => {
    const job = await waitFor(server, (await json(await submit(body()))).id, org.auth, ['succeeded']);
    const whole = Buffer.from(await (await fetch(`${server.url}${job.result.url}`, { headers: org.auth })).arrayBuffer());
    const part = await fetch(`${server.url}${job.result.url}`, { headers: { ...org.auth, range: 'bytes=10-99' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-99/${whole.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(10, 100));
    const beyond = await fetch(`${server.url}${job.result.url}`, { headers: { ...org.auth, range: `bytes=${whole.length}-` } });
    assert.equal(beyond.status, 416);

    const paused = await startServer({ config: { accounts: { enabled: false }, jobs: { concurrency: 0 }, models: {} } });
    try {
      const queued = await json(await paused.post('/tts/jobs', { ...body(), model_id: 'gepard-1.0', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } }));
      assert.equal(queued.status, 'queued');
      const early = await fetch(`${paused.url}/tts/jobs/${queued.id}/audio`);
      assert.equal(early.status, 409);
      assert.equal(((await early.json()) as any).error_code, 'job_not_finished');
    } finally {
      await paused.close();
    }
  });

  test('events follow a job from queued to done', T, async () => {
    const submitted = await json(await submit(body({ transcript: prose(3_000) })));
    const response = await fetch(`${server.url}/tts/jobs/${submitted.id}/events`, { headers: org.auth });
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const text = await response.text();
    const events = [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gmu)].map((m) => ({ event: m[1], job: JSON.parse(m[2]) }));
    assert.ok(events.length >= 2, text);
    assert.equal(events.at(-1)!.event, 'done');
    assert.equal(events.at(-1)!.job.status, 'succeeded');
    const done = events.map((e) => e.job.progress.segments_done);
    assert.deepEqual(done, [...done].sort((a, b) => a - b), 'progress only grows');
  });

  test('cancel of a queued job releases its hold and charges nothing; a second DELETE removes it', T, async () => {
    const paused = await startServer({ config: { accounts: { enabled: true }, jobs: { concurrency: 0 } } });
    try {
      const payer = await newOrg(paused, { credits: 10_000 });
      const response = await paused.post('/tts/jobs', { ...body(), model_id: 'gepard-1.0', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } }, payer.auth);
      const job = await json(response);
      assert.equal(job.status, 'queued');
      const { ledger } = paused.app.services.store;
      assert.equal(await ledger.reserved(payer.orgId), job.credits, 'the whole cost is held at submit');
      const cancelled = await fetch(`${paused.url}/tts/jobs/${job.id}`, { method: 'DELETE', headers: payer.auth });
      assert.equal(cancelled.status, 200);
      assert.equal(((await cancelled.json()) as any).status, 'cancelled');
      assert.equal(await ledger.reserved(payer.orgId), 0);
      assert.equal(await ledger.sum(payer.orgId), 10_000, 'nothing charged');
      const removed = await fetch(`${paused.url}/tts/jobs/${job.id}`, { method: 'DELETE', headers: payer.auth });
      assert.equal(removed.status, 204);
      assert.equal((await fetch(`${paused.url}/tts/jobs/${job.id}`, { headers: payer.auth })).status, 404);
    } finally {
      await paused.close();
    }
  });

  test('retention removes an expired job and its files', T, async () => {
    const job = await waitFor(server, (await json(await submit(body()))).id, org.auth, ['succeeded']);
    const folder = join(dataDir, 'jobs', job.id);
    assert.ok(existsSync(folder));
    // Sweeps as if the retention period (an hour here) had passed.
    await server.app.services.jobs!.runner.reconcile(Date.now() + 2 * 3_600_000);
    assert.equal(existsSync(folder), false);
    assert.equal((await fetch(`${server.url}/tts/jobs/${job.id}`, { headers: org.auth })).status, 404);
  });

  test('an Idempotency-Key makes a retried submit answer the same job, held once', T, async () => {
    const first = await submit(body(), { ...org.auth, 'idempotency-key': 'chapter-7' });
    const second = await submit(body(), { ...org.auth, 'idempotency-key': 'chapter-7' });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    const [a, b] = [await json(first), await json(second)];
    assert.equal(a.id, b.id);
    await waitFor(server, a.id, org.auth, ['succeeded']);
    const charges = (await server.app.services.store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.chargeKey === a.id);
    assert.equal(charges.length, 1);
  });

  test('the route schema refuses as the decoder did: both texts, neither, stream, malformed inputs, a bad page, before the key only after it', T, async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [body({ inputs: [{ transcript: 'Two.' }] }), 'invalid_request', 'send transcript or inputs, not both'],
      [body({ transcript: undefined }), 'missing_transcript', ''],
      [body({ stream: true }), 'invalid_request', 'a job is not streamed: leave out stream (follow GET /tts/jobs/{id}/events instead)'],
      [body({ transcript: undefined, inputs: [{ text: 'wrong field' }] }), 'invalid_request', 'inputs must be a non-empty array of {transcript, voice?} (inputs.0.transcript: '],
      [body({ webhook_url: 42 }), 'invalid_webhook_url', 'it must be a string holding an absolute URL'],
    ];
    for (const [payload, code, message] of cases) {
      const response = await submit(payload);
      const answer = await json(response);
      assert.equal(response.status, 400, JSON.stringify(answer));
      assert.equal(answer.error_code, code);
      assert.ok(String(answer.message).includes(message), answer.message);
      // Without a key, the body is not looked at.
      assert.equal((await submit(payload, {})).status, 401);
    }
    const page = await fetch(`${server.url}/tts/jobs?limit=0`, { headers: org.auth });
    const refused = await json(page);
    assert.equal(page.status, 400);
    assert.equal(refused.error_code, 'invalid_request');
    assert.ok(String(refused.message).includes('limit must be an integer from 1 to 100; got "0"'), refused.message);
    assert.equal((await fetch(`${server.url}/tts/jobs?limit=0`)).status, 401);
  });

  test('bad input is a clear 4xx with nothing held: too long, unknown voice, malformed inputs, stream, another org', T, async () => {
    const { ledger, jobs } = server.app.services.store;
    const before = await ledger.sum(org.orgId);
    const cases: [Record<string, unknown>, number, string][] = [
      [body({ transcript: prose(60_001) }), 400, 'job_too_long'],
      [body({ voice: { mode: 'id', id: 'no-such-voice' } }), 404, 'voice_not_found'],
      [body({ transcript: undefined, inputs: [] }), 400, 'invalid_request'],
      [body({ transcript: undefined, inputs: [{ text: 'wrong field' }] }), 400, 'invalid_request'],
      [body({ transcript: undefined, inputs: 'not a list' }), 400, 'invalid_request'],
      [body({ stream: true }), 400, 'invalid_request'],
      [body({ transcript: 'Hello <break time="forever"/> there.' }), 400, 'invalid_tag'],
      [body({ transcript: '<speak><p>unclosed</speak>' }), 400, 'invalid_ssml'],
      [body({ output_format: { container: 'ogg', sample_rate: 8000 } }), 400, 'invalid_output_format'],
      [body({ webhook_url: 'http://127.0.0.1:9/hook' }), 400, 'invalid_webhook_url'],
    ];
    for (const [payload, status, code] of cases) {
      const response = await submit(payload);
      const answer = await json(response);
      assert.equal(response.status, status, `${JSON.stringify(payload).slice(0, 120)} → ${JSON.stringify(answer)}`);
      assert.equal(answer.error_code, code);
      assert.ok(response.headers.get('x-request-id'));
    }
    assert.equal(await ledger.sum(org.orgId), before);
    assert.equal(await ledger.reserved(org.orgId), 0);

    const other = await newOrg(server, { credits: 1_000 });
    const mine = (await json(await submit(body()))).id;
    for (const path of ['', '/audio', '/timestamps', '/events']) {
      const response = await fetch(`${server.url}/tts/jobs/${mine}${path}`, { headers: other.auth });
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as any).error_code, 'job_not_found');
    }
    assert.equal((await fetch(`${server.url}/tts/jobs/${mine}`, { method: 'DELETE', headers: other.auth })).status, 404);
    const listed = await json(await fetch(`${server.url}/tts/jobs`, { headers: other.auth }));
    assert.deepEqual(listed.data, []);
    assert.ok(await jobs.get(mine));

    // The postpaid rule of every request: granted while balance − holds > 0.
    const poor = await newOrg(server, { credits: 0 });
    const refused = await submit(body(), poor.auth);
    assert.equal(refused.status, 402);
    assert.equal(((await refused.json()) as any).error_code, 'insufficient_credits');
  });

  test('a job’s webhook is signed (Standard Webhooks) and carries the job as it ended', T, async () => {
    const received: { headers: Record<string, string>; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let data = '';
      req.on('data', (chunk) => (data += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body: data });
        // The first delivery is refused: the second attempt carries the same id.
        res.writeHead(received.length === 1 ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const hooked = await startServer({ config: { jobs: { pollMs: 50, webhooks: { allowHttp: true, allowPrivateNetworks: true, secret } } } });
    try {
      const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?token=abc`;
      const response = await hooked.post('/tts/jobs', { ...body(), model_id: 'gepard-1.0', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 }, webhook_url: hookUrl });
      assert.equal(response.status, 202);
      const { id } = (await response.json()) as { id: string };
      // The retry waits out the first backoff step (5 s ± 20 %).
      assert.ok(await eventually(() => received.length >= 2, 30_000, 50), `deliveries: ${received.length}`);
      for (const delivery of received) assert.ok(verifyWebhook(secret, delivery.headers, delivery.body), 'signed');
      assert.equal(received[0].headers['webhook-id'], received[1].headers['webhook-id']);
      const event = JSON.parse(received[1].body);
      assert.equal(event.type, 'job.succeeded');
      assert.equal(event.data.id, id);
      assert.equal(event.data.status, 'succeeded');
      const stored = await hooked.app.services.store.jobs.get(id);
      assert.ok(await eventually(async () => (await hooked.app.services.store.jobs.get(id))!.webhookState === 'delivered', 5_000), JSON.stringify(stored));
    } finally {
      await hooked.close();
      receiver.close();
    }
  });

  test('a job whose segment cannot be made fails: nothing charged, its hold released, its error in the registry shape', T, async () => {
    let calls = 0;
    const engine = new ToneEngine({ id: 'fragile', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 });
    const speak = engine.synthesizeInt16.bind(engine);
    // The third segment meets an error no retry can cure.
    engine.synthesizeInt16 = (input, signal) => {
      if (++calls === 3) throw new ApiError('invalid_request', { reason: 'this engine cannot speak the third segment' });
      return speak(input, signal);
    };
    const fragile = await startServer({
      config: {
        accounts: { enabled: true },
        engines: { fragile: { type: 'tone', sampleRate: 8000 } } as never,
        models: { 'fragile-jobs': { extends: 'omnivoice', engine: 'fragile' } },
        jobs: { pollMs: 50, segmentCharacters: 100 },
      },
      engines: { fragile: engine },
    });
    try {
      const payer = await newOrg(fragile, { credits: 10_000 });
      const response = await fragile.post('/tts/jobs', { ...body({ transcript: prose(1_000) }), model_id: 'fragile-jobs' }, payer.auth);
      assert.equal(response.status, 202, await response.clone().text());
      const job = await waitFor(fragile, ((await response.json()) as { id: string }).id, payer.auth, ['failed', 'succeeded']);
      assert.equal(job.status, 'failed');
      assert.equal(job.error.error_code, 'invalid_request');
      assert.equal(job.error.status_code, 400);
      assert.equal(job.result, null);
      assert.ok(job.finished_at && job.expires_at);
      const { ledger, jobs } = fragile.app.services.store;
      assert.ok(await eventually(async () => (await jobs.get(job.id))!.billing === 'released', 5_000));
      assert.equal(await ledger.reserved(payer.orgId), 0);
      assert.equal(await ledger.sum(payer.orgId), 10_000, 'nothing charged');
      assert.equal((await fetch(`${fragile.url}/tts/jobs/${job.id}/audio`, { headers: payer.auth })).status, 409);
    } finally {
      await fragile.close();
    }
  });

  test('a job shows succeeded only once its charge is written, however long the removal of its segments takes', T, async () => {
    // Deleting a segment waits until the test lets it go: the removal outlasts every read below.
    let letGo!: () => void;
    const removal = new Promise<void>((resolve) => (letGo = resolve));
    let deletes = 0;
    const slowDataDir = tempDataDir();
    const slow = await startServer({
      config: {
        dataDir: slowDataDir,
        accounts: { enabled: true },
        engines: { tone8k: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
        models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone8k' } },
        jobs: { pollMs: 50, segmentCharacters: 100 },
      },
      jobStorage: (storage) =>
        new Proxy(storage, {
          get(target, property) {
            if (property === 'delete') return async (key: string) => (deletes++, await removal, target.delete(key));
            const value = Reflect.get(target, property, target) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
    try {
      const payer = await newOrg(slow, { credits: 10_000 });
      const response = await slow.post('/tts/jobs', body({ transcript: prose(1_000) }), payer.auth);
      assert.equal(response.status, 202, await response.clone().text());
      const { id } = (await response.json()) as { id: string };
      let job: any;
      assert.ok(
        await eventually(async () => {
          job = await json(await fetch(`${slow.url}/tts/jobs/${id}`, { headers: payer.auth }));
          return ['succeeded', 'failed', 'cancelled'].includes(job.status);
        }, 60_000, 20),
        `job ended; last seen ${JSON.stringify(job)}`,
      );
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      // Read at once, with the segments' removal still held up.
      const { ledger } = slow.app.services.store;
      const charges = (await ledger.list(payer.orgId, { limit: 100 })).data.filter((row) => row.chargeKey === id);
      assert.equal(charges.length, 1, 'the charge is written when the job shows succeeded');
      assert.equal(charges[0].credits, -1_000);
      assert.equal(await ledger.sum(payer.orgId), 9_000);
      letGo();
      // The segments still go, after the charge; the result and its word timings (for captions) stay.
      const left = () => readdirSync(join(slowDataDir, 'jobs', id)).sort().join();
      assert.ok(await eventually(async () => deletes > 0 && left() === 'result,timestamps.json', 10_000, 20), `segments removed; left: ${left()}`);
    } finally {
      letGo();
      await slow.close();
    }
  });

  test('a cancel that comes once the job is being charged is too late: the job succeeds, charged once', T, async () => {
    // The client's DELETE arrives in the last moment of the run: after its charge, before it records the end.
    const real = openSqliteStore(join(tempDataDir(), 'voicegate.sqlite'));
    let late = null as { status: number; body: any } | null;
    let target: { url: string; auth: Record<string, string> } | null = null;
    const store: Store = {
      ...real,
      jobs: {
        ...real.jobs,
        finish: async (id, token, end) => {
          if (end.status === 'succeeded' && target && !late) {
            const response = await fetch(`${target.url}/tts/jobs/${id}`, { method: 'DELETE', headers: target.auth });
            late = { status: response.status, body: response.status === 204 ? null : await response.json() };
          }
          return real.jobs.finish(id, token, end);
        },
      },
    };
    const racing = await startServer({
      store,
      config: {
        accounts: { enabled: true },
        engines: { tone8k: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
        models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone8k' } },
        jobs: { pollMs: 50, segmentCharacters: 100 },
      },
    });
    try {
      const payer = await newOrg(racing, { credits: 10_000 });
      target = { url: racing.url, auth: payer.auth };
      const response = await racing.post('/tts/jobs', body({ transcript: prose(500) }), payer.auth);
      assert.equal(response.status, 202, await response.clone().text());
      const { id } = (await response.json()) as { id: string };
      const job = await waitFor(racing, id, payer.auth, ['succeeded', 'failed', 'cancelled'], 60_000);
      assert.ok(late, 'the DELETE was sent');
      assert.equal(late!.status, 200);
      assert.equal(late!.body.status, 'running', 'the DELETE answers the job as it is: it runs to its end');
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const charges = (await store.ledger.list(payer.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
      assert.deepEqual(charges.map((row) => [row.chargeKey, row.credits]), [[id, -500]]);
      assert.equal(await store.ledger.sum(payer.orgId), 9_500);
      assert.equal(await store.ledger.reserved(payer.orgId), 0);
      assert.equal((await store.jobs.get(id))?.billing, 'charged');
    } finally {
      await racing.close();
    }
  });

  test('a charged job whose end cannot be recorded is not failed: a later run records it succeeded, charged once', T, async () => {
    const real = openSqliteStore(join(tempDataDir(), 'voicegate.sqlite'));
    let refused = 0;
    const store: Store = {
      ...real,
      jobs: {
        ...real.jobs,
        finish: async (id, token, end) => {
          // The store is away for the first end the run records.
          if (refused++ === 0) throw new Error('database unreachable');
          return real.jobs.finish(id, token, end);
        },
      },
    };
    const flaky = await startServer({
      store,
      config: {
        accounts: { enabled: true },
        engines: { tone8k: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
        models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone8k' } },
        jobs: { pollMs: 50, segmentCharacters: 100, leaseMs: 1_000, heartbeatMs: 200 },
      },
    });
    try {
      const payer = await newOrg(flaky, { credits: 10_000 });
      const response = await flaky.post('/tts/jobs', body({ transcript: prose(300) }), payer.auth);
      assert.equal(response.status, 202, await response.clone().text());
      const { id } = (await response.json()) as { id: string };
      const job = await waitFor(flaky, id, payer.auth, ['succeeded', 'failed', 'cancelled'], 60_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.ok(refused >= 2, 'the end was recorded by a later attempt');
      const charges = (await store.ledger.list(payer.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
      assert.deepEqual(charges.map((row) => [row.chargeKey, row.credits]), [[id, -300]]);
      assert.equal(await store.ledger.sum(payer.orgId), 9_700);
      assert.equal(await store.ledger.reserved(payer.orgId), 0);
    } finally {
      await flaky.close();
    }
  });

  test('an organisation with jobs.maxQueuedPerOrg unfinished jobs gets 429 too_many_jobs', T, async () => {
    const paused = await startServer({ config: { jobs: { concurrency: 0, maxQueuedPerOrg: 2 } } });
    try {
      const payload = { ...body(), model_id: 'gepard-1.0', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } };
      assert.equal((await paused.post('/tts/jobs', payload)).status, 202);
      assert.equal((await paused.post('/tts/jobs', payload)).status, 202);
      const third = await paused.post('/tts/jobs', payload);
      assert.equal(third.status, 429);
      assert.equal(((await third.json()) as any).error_code, 'too_many_jobs');
      const list = await json(await fetch(`${paused.url}/tts/jobs?limit=1`));
      assert.equal(list.data.length, 1);
      assert.equal(list.has_more, true);
      const next = await json(await fetch(`${paused.url}/tts/jobs?limit=1&starting_after=${list.data[0].id}`));
      assert.equal(next.data.length, 1);
      assert.notEqual(next.data[0].id, list.data[0].id);
      assert.equal(next.has_more, false);
    } finally {
      await paused.close();
    }
  });
});
