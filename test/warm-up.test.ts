/**
 * @module test/warm-up
 * Warm before ready, as a server runs it by default: before it listens, the
 * engine's workers speak their warm-up jobs and every HTTP synthesis endpoint
 * takes a few requests in-process. The warm-up is real (the engine ran its
 * requests, each answered 200) and leaves no trace a user or operator would
 * see as theirs: nothing charged, no request log line, no metrics sample,
 * nothing in the audio cache.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { balanceOf } from './helpers/accounts.js';
import { startServer } from './helpers/server.js';

const ADMIN = 'admin-token-for-warm-up-tests';

test('a server warms up before it listens: real requests on every HTTP endpoint, none billed, logged, counted or cached', { timeout: 120_000 }, async () => {
  const lines: Record<string, unknown>[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const server = await startServer({
    config: {
      server: { warmUp: true },
      accounts: { enabled: true, adminToken: ADMIN, startingCredits: 5000 },
      engines: { espeak: { type: 'espeak', workers: 1, warmUpJobs: 2 } },
      cache: { enabled: true },
    },
    logDestination,
  });
  try {
    const warmed = lines.find((line) => line.msg === 'warmed up the synthesis routes');
    assert.ok(warmed, 'the warm-up reports itself');
    // One model per engine (gepard-1.0 for eSpeak), seven requests (three SSE, two /tts/bytes, two OpenAI), three rounds.
    assert.equal(warmed.requests, 21);
    assert.equal(warmed.failed, 0, 'every warm-up request is one the server answers 200');
    const engine = server.app.services.engines.get('espeak')!;
    const jobs = engine.info().jobs as { completed: number };
    assert.ok(jobs.completed >= 2 + 21, `${jobs.completed} engine jobs: the warm-up's own and one or more per request`);

    assert.equal(lines.filter((line) => line.msg === 'synthesis ended' || line.msg === 'synthesis failed').length, 0, 'no request log line');
    const bootstrap = server.app.bootstrap!;
    assert.deepEqual(await balanceOf(server, bootstrap.org.id), { balance: 5000, sum: 5000 }, 'nothing charged');
    const cache = server.app.services.cache!.store.stats();
    assert.equal(cache.memory.entries, 0, 'nothing cached');
    const scrape = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    assert.doesNotMatch(scrape, /^voicegate_requests_total\{/m, 'no request counted');
    assert.doesNotMatch(scrape, /^voicegate_time_to_first_audio_seconds_count\{/m, 'no first audio timed');

    // And the server it warmed serves its first caller.
    const response = await fetch(`${server.url}/tts/bytes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bootstrap.key}`, 'cartesia-version': '2025-04-16' },
      body: JSON.stringify({ model_id: 'gepard-1.0', transcript: 'Hello there.', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 } }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok((await response.arrayBuffer()).byteLength > 10_000);
    const after = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    assert.match(after, /^voicegate_requests_total\{/m, 'the first real request is counted');
  } finally {
    await server.close();
  }
});
