/**
 * @module test/audio-cache.accounts
 * The audio cache with accounts on: single flight (32 identical concurrent
 * requests run the engine once, each answered in full and charged on its
 * own; followers finish when the leader's client leaves), billing of hits
 * (`cache.billHits`), isolation between organisations and
 * `cache.shareAcrossOrganisations`, and the admin purge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCacheCommand } from '../src/cli/cache.js';
import { UsageError } from '../src/cli/accounts.js';
import { countTranscriptCharacters } from '../src/synthesis/tags.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { engineJobs, fresh, headsSplit } from './helpers/cache.js';
import { until } from './helpers/poll.js';

const ADMIN = 'admin-token-for-cache-tests';
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };

async function get(server: TestServer, body: unknown, headers: Record<string, string>, signal?: AbortSignal) {
  const res = await fetch(server.url + '/tts/bytes', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal });
  return { status: res.status, headers: res.headers, audio: Buffer.from(await res.arrayBuffer()) };
}

async function charges(server: TestServer, orgId: string) {
  const page = await server.app.services.accounts!.store.ledger.list(orgId, { limit: 1000 });
  return page.data.filter((e) => e.kind === 'charge');
}

describe('audio cache with accounts', () => {
  let server: TestServer;
  let org: TestOrg;
  before(async () => {
    server = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN } } });
    org = await newOrg(server, { credits: 10_000_000 });
  });
  after(() => server.close());

  test('32 identical concurrent requests run the engine once; each gets the whole audio, its own charge and cost headers', { timeout: 60_000 }, async () => {
    const transcript = fresh('Your call is important to us. Please stay on the line.');
    const body = ttsBody({ model_id: 'omnivoice', transcript, output_format: RAW, stream: true });
    // What one run of this text costs the engine, in jobs.
    let jobs = engineJobs(server);
    // Counted from before the run alone too: it may be the one whose first sentence was split.
    const split = headsSplit(server);
    const alone = await get(server, body, { ...org.auth, 'cache-control': 'no-store' });
    const perRun = engineJobs(server) - jobs;
    assert.ok(perRun >= 1);
    const before = (await charges(server, org.orgId)).length;
    jobs = engineJobs(server);
    const answers = await Promise.all(Array.from({ length: 32 }, () => get(server, body, org.auth)));
    const ran = engineJobs(server) - jobs;
    // eSpeak may speak a first sentence's head as a job of its own when its worker is busy.
    assert.ok(ran <= perRun + 1, `${ran} engine jobs for 32 identical requests (one run takes ${perRun})`);
    assert.deepEqual(answers.map((a) => a.status), Array(32).fill(200));
    assert.equal(answers.filter((a) => a.headers.get('x-cache') === 'miss').length, 1);
    assert.equal(answers.filter((a) => a.headers.get('x-cache') === 'hit').length, 31);
    for (const answer of answers) {
      assert.ok(answer.audio.equals(answers[0].audio), 'every follower heard the whole of it');
      assert.equal(answer.headers.get('x-request-credits'), String(countTranscriptCharacters(transcript)));
    }
    // The same audio as alone, unless the run alone or the leader arrived while a worker was still busy
    // and its first sentence was spoken as a head and the rest: then a few samples more or less.
    if (headsSplit(server) === split) assert.equal(answers[0].audio.length, alone.audio.length);
    else assert.ok(Math.abs(answers[0].audio.length - alone.audio.length) < 0.05 * alone.audio.length);
    const rows = await charges(server, org.orgId);
    assert.equal(rows.length - before, 32, 'one charge per request');
    const ids = new Set(rows.slice(0, 32).map((r) => r.requestId));
    assert.equal(ids.size, 32);
    assert.ok(rows.slice(0, 32).every((r) => r.characters === countTranscriptCharacters(transcript)));
  });

  test("the followers complete when the leader's client leaves", { timeout: 60_000 }, async () => {
    const body = ttsBody({ model_id: 'omnivoice', transcript: fresh('A longer announcement that keeps speaking for a few seconds. '.repeat(6)), output_format: RAW, stream: true });
    const cache = server.app.services.cache!.store;
    const leaving = new AbortController();
    const res = await fetch(server.url + '/tts/bytes', { method: 'POST', headers: { 'content-type': 'application/json', ...org.auth }, body: JSON.stringify(body), signal: leaving.signal });
    assert.equal(res.headers.get('x-cache'), 'miss');
    const reader = res.body!.getReader();
    await reader.read();
    const followersBefore = cache.followers;
    const followers = Array.from({ length: 4 }, () => get(server, body, org.auth));
    await until(() => cache.followers === followersBefore + 4, { timeoutMs: 10_000, intervalMs: 5, what: 'four followers' });
    leaving.abort();
    await reader.cancel().catch(() => {});
    const heard = await Promise.all(followers);
    const whole = await get(server, body, org.auth);
    assert.equal(whole.headers.get('x-cache'), 'hit', 'the run completed and was kept');
    for (const answer of heard) {
      assert.equal(answer.status, 200);
      assert.ok(answer.audio.length > 100_000 && answer.audio.equals(whole.audio));
    }
  });

  test('another organisation gets a miss: entries are per organisation', async () => {
    const other = await newOrg(server);
    const body = ttsBody({ transcript: fresh(), output_format: RAW });
    assert.equal((await get(server, body, org.auth)).headers.get('x-cache'), 'miss');
    assert.equal((await get(server, body, org.auth)).headers.get('x-cache'), 'hit');
    assert.equal((await get(server, body, other.auth)).headers.get('x-cache'), 'miss');
    assert.equal((await get(server, body, other.auth)).headers.get('x-cache'), 'hit');
  });

  test('the admin purge removes an organisation’s entries, a voice’s, or all', async () => {
    const body = ttsBody({ transcript: fresh(), output_format: RAW });
    const emma = { ...body, voice: { mode: 'id', id: 'emma' } };
    await get(server, body, org.auth);
    await get(server, emma, org.auth);
    await until(() => server.app.services.cache!.store.inFlight === 0, { timeoutMs: 10_000, intervalMs: 5, what: 'the entries to be kept' });
    const purge = (what: unknown, token = ADMIN) => server.post('/admin/cache/purge', what, { authorization: `Bearer ${token}` });
    assert.equal((await purge({}, 'wrong')).status, 401);
    assert.equal((await purge({ voice_id: 7 })).status, 400);
    assert.equal((await purge({})).status, 400, 'everything only when asked for by name');
    const byVoice = await purge({ organisation_id: org.orgId, voice_id: 'emma' });
    assert.equal(byVoice.status, 200);
    assert.ok(((await byVoice.json()) as { purged: number }).purged >= 1);
    assert.equal((await get(server, emma, org.auth)).headers.get('x-cache'), 'miss');
    assert.equal((await get(server, body, org.auth)).headers.get('x-cache'), 'hit');
    assert.equal((await purge({ organisation_id: org.orgId })).status, 200);
    assert.equal((await get(server, body, org.auth)).headers.get('x-cache'), 'miss');
    assert.equal((await purge({ all: true })).status, 200);
    assert.equal(server.app.services.cache!.store.stats().memory.entries, 0);
  });

  test('voicegate cache purge asks the server, with the admin token', async () => {
    const body = ttsBody({ transcript: fresh(), output_format: RAW });
    await get(server, body, org.auth);
    await until(() => server.app.services.cache!.store.inFlight === 0, { timeoutMs: 10_000, intervalMs: 5, what: 'the entry to be kept' });
    const config = server.app.services.config;
    const lines: string[] = [];
    await runCacheCommand(config, ['cache', 'purge', '--org', org.orgId, '--url', server.url], (line) => lines.push(line));
    assert.match(lines[0], /^purged [1-9]\d* entries$/);
    assert.equal((await get(server, body, org.auth)).headers.get('x-cache'), 'miss');
    await assert.rejects(runCacheCommand(config, ['cache', 'purge', '--url', server.url]), UsageError);
    await assert.rejects(runCacheCommand({ ...config, accounts: { ...config.accounts, adminToken: null } }, ['cache', 'purge', '--all', '--url', server.url]), /admin token/);
  });
});

describe('audio cache: sharing and free hits', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { accounts: { enabled: true }, cache: { shareAcrossOrganisations: true, billHits: false } } });
  });
  after(() => server.close());

  test('with sharing on, a built-in voice’s entry serves every organisation; with billHits off a hit is charged 0, in the ledger and the headers', async () => {
    const [a, b] = [await newOrg(server), await newOrg(server)];
    const transcript = fresh();
    for (const stream of [false, true]) {
      const body = ttsBody({ transcript: `${transcript} ${stream}`, output_format: RAW, stream });
      const miss = await get(server, body, a.auth);
      assert.equal(miss.headers.get('x-cache'), 'miss');
      const characters = String(countTranscriptCharacters(`${transcript} ${stream}`));
      assert.equal(miss.headers.get('x-request-credits'), characters);
      const hit = await get(server, body, b.auth);
      assert.equal(hit.headers.get('x-cache'), 'hit', 'shared across organisations');
      assert.ok(hit.audio.equals(miss.audio));
      assert.equal(hit.headers.get('x-request-credits'), '0');
      const rows = await charges(server, b.orgId);
      assert.equal(rows[0].credits, 0);
      assert.equal(rows[0].characters, 0);
    }
    const org = await server.app.services.accounts!.store.orgs.get(b.orgId);
    assert.equal(org!.balance, 100_000, 'the hits cost nothing');
  });
});
