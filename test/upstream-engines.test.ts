/**
 * @module test/upstream-engines
 * Remote engines against a scripted fake inference server: the shared engine
 * contract for both dialects, then a model served by a pool of two servers —
 * routing, ejection and re-admission, one retry before the first audio and
 * none after, every documented upstream error on /tts/bytes, SSE and the
 * WebSocket, the time limit, and cancellation reaching the server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CartesiaUpstreamEngine } from '../src/engines/upstream/cartesia-engine.js';
import { OpenAIUpstreamEngine } from '../src/engines/upstream/openai-engine.js';
import { createLogger } from '../src/log/logger.js';
import { engineContract } from './helpers/engine-contract.js';
import { startFakeUpstream, type Behaviour, type FakeUpstream } from './helpers/fake-upstream.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { until } from './helpers/poll.js';

let contractUpstream: FakeUpstream;
before(async () => (contractUpstream = await startFakeUpstream()));
after(() => contractUpstream.close());

const common = {
  model: 'omnivoice',
  sampleRate: 24000,
  voices: { sarah: 'af_sarah' },
  passVoiceIds: false,
  timeoutMs: 5000,
  healthPath: '/health',
  probeIntervalMs: 1000,
  ejectAfterFailures: 3,
  logger: createLogger('silent'),
};

engineContract(
  'openai-upstream',
  () => new OpenAIUpstreamEngine({ ...common, id: 'gpu', upstreams: [{ url: contractUpstream.url, maxConcurrent: 8 }] }, 'pcm'),
  { speaksText: false, wordTimings: false },
);
engineContract(
  'openai-upstream (wav bodies)',
  () => new OpenAIUpstreamEngine({ ...common, id: 'gpu-wav', upstreams: [{ url: contractUpstream.url, maxConcurrent: 8 }] }, 'wav'),
  { speaksText: false, wordTimings: false },
);
engineContract(
  'cartesia-upstream',
  () => new CartesiaUpstreamEngine({ ...common, id: 'peer', upstreams: [{ url: contractUpstream.url, maxConcurrent: 8 }] }, 'pcm_f32le'),
  { speaksText: false, wordTimings: true },
);

describe('a model served by a pool of two inference servers', () => {
  let a: FakeUpstream;
  let b: FakeUpstream;
  let server: TestServer;
  const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };
  const body = (overrides: Record<string, unknown> = {}) => ttsBody({ model_id: 'omnivoice', output_format: RAW, ...overrides });

  before(async () => {
    a = await startFakeUpstream();
    b = await startFakeUpstream();
    server = await startServer({
      config: {
        engines: {
          gpu: {
            type: 'openai-upstream',
            upstreams: [{ url: a.url, apiKey: 'upstream-secret-key', maxConcurrent: 4 }, { url: b.url, maxConcurrent: 4 }],
            model: 'k2-fsa/OmniVoice',
            sampleRate: 24000,
            voices: { sarah: 'sarah_ref', emma: 'emma_ref' },
            timeoutMs: 1500,
            probeIntervalMs: 150,
            ejectAfterFailures: 2,
          },
          peer: { type: 'cartesia-upstream', upstreams: [{ url: b.url }], model: 'sonic-x', sampleRate: 24000, voices: { sarah: 'remote-sarah' } },
        },
        models: { omnivoice: { engine: 'gpu' }, 'peer-model': { extends: 'gepard-1.0', engine: 'peer' } },
        // Routing and faults are the subject: every request must reach an inference server.
        cache: { enabled: false },
      },
    });
  });
  after(async () => {
    await server.close();
    await a.close();
    await b.close();
  });

  const reset = () => {
    a.script = [];
    b.script = [];
    a.requests.length = 0;
    b.requests.length = 0;
  };

  test('speech comes back at the requested rate; GET /models names the engine and its health', async () => {
    reset();
    const response = await server.post('/tts/bytes', body({ transcript: 'Hello from the GPU pool.', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }));
    assert.equal(response.status, 200);
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.ok(Math.abs((bytes.length - 44) / 2 / 16000 - 24 * 0.05) < 0.01);
    const sent = [...a.requests, ...b.requests][0].body;
    assert.equal(sent.model, 'k2-fsa/OmniVoice');
    assert.equal(sent.voice, 'sarah_ref');
    assert.equal(sent.response_format, 'pcm');
    const models = (await (await fetch(server.url + '/models')).json()) as any;
    const omni = models.data.find((m: any) => m.id === 'omnivoice');
    assert.equal(omni.engine.type, 'openai-upstream');
    assert.deepEqual(omni.engine.upstreams, { healthy: 2, total: 2 });
    assert.ok(!JSON.stringify(models).includes(a.url), 'server addresses are not published');
    // The operator sees each server's health in the metrics.
    const scrape = await server.app.services.metrics!.render();
    for (const upstream of [a, b]) assert.ok(scrape.includes(`voicegate_upstream_healthy{engine="gpu",upstream="${upstream.url}"} 1`), scrape.slice(0, 300));
  });

  test('a voice the pool has no mapping for is 409 voice_profile_missing', async () => {
    const response = await server.post('/tts/bytes', body({ voice: { mode: 'id', id: 'oliver' } }));
    assert.equal(response.status, 409);
    assert.equal(((await response.json()) as any).error_code, 'voice_profile_missing');
  });

  test('least-outstanding routing spreads concurrent load over both servers', async () => {
    reset();
    const responses = await Promise.all(Array.from({ length: 8 }, () => server.post('/tts/bytes', body({ transcript: 'Spread the load evenly now.' }))));
    for (const r of responses) {
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
    assert.ok(a.requests.length >= 2 && b.requests.length >= 2, `${a.requests.length} / ${b.requests.length}`);
  });

  test('a failure before any audio is retried once on the other server; the client never notices', async () => {
    for (const behaviour of ['reset', 'status-500', 'json'] as const) {
      // Earlier failures may have ejected A; wait until a probe has re-admitted it.
      await until(() => (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 2, { timeoutMs: 3000 });
      reset();
      // Server A fails once; a request that lands there is retried on B.
      a.script = [behaviour];
      const responses = await Promise.all([server.post('/tts/bytes', body()), server.post('/tts/bytes', body())]);
      for (const r of responses) {
        assert.equal(r.status, 200, `${behaviour}: ${await r.clone().text()}`);
        await r.arrayBuffer();
      }
      assert.ok(a.requests.length >= 1, `${behaviour}: the failing server was tried`);
    }
  });

  test('both servers failing gives the documented code, never the server address or key', async () => {
    const cases: [Behaviour, number, string, RegExp][] = [
      ['status-500', 502, 'upstream_error', /HTTP 500/],
      ['json', 502, 'upstream_error', /application\/json instead of audio/],
      ['reset', 502, 'upstream_unavailable', /could not be reached/],
    ];
    for (const [behaviour, status, code, message] of cases) {
      reset();
      a.script = [behaviour];
      b.script = [behaviour];
      const response = await server.post('/tts/bytes', body());
      const error = (await response.json()) as any;
      assert.equal(response.status, status, behaviour);
      assert.equal(error.error_code, code);
      assert.match(error.message, message);
      assert.ok(!JSON.stringify(error).includes('127.0.0.1') && !JSON.stringify(error).includes('secret'), JSON.stringify(error));
      assert.equal(a.requests.length + b.requests.length, 2, 'exactly one retry');
      await until(() => a.requests.length + b.requests.length >= 2, { timeoutMs: 3000 });
      // Let the pool re-admit a server that the failures may have ejected.
      await until(() => server.app.services.engines.get('gpu')!.info().upstreams !== undefined && (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 2, { timeoutMs: 3000 });
    }
  });

  test('no retry once audio has been produced: a body broken mid-way is upstream_error', async () => {
    reset();
    a.script = ['reset-mid-body'];
    b.script = ['reset-mid-body'];
    const response = await server.post('/tts/bytes', body({ transcript: 'A long sentence that will break in the middle of its audio stream.' }));
    assert.equal(response.status, 502);
    assert.equal(((await response.json()) as any).error_code, 'upstream_error');
    assert.equal(a.requests.length + b.requests.length, 1);
  });

  test('slow first byte within the limit is fine; a hang is 504 upstream_timeout', async () => {
    reset();
    a.script = ['slow-first-byte'];
    b.script = ['slow-first-byte'];
    const slow = await server.post('/tts/bytes', body());
    assert.equal(slow.status, 200);
    await slow.arrayBuffer();
    a.script = ['hang'];
    b.script = ['hang'];
    const started = Date.now();
    const hung = await server.post('/tts/bytes', body());
    assert.equal(hung.status, 504);
    assert.equal(((await hung.json()) as any).error_code, 'upstream_timeout');
    assert.ok(Date.now() - started < 3000);
    await until(() => a.aborted + b.aborted >= 1, { timeoutMs: 2000 });
  });

  test('tiny network chunks still give the whole clip', async () => {
    reset();
    a.script = ['tiny-chunks'];
    b.script = ['tiny-chunks'];
    // 7-byte writes split samples; few enough of them to finish well inside the 2 s generation limit on a slow machine.
    const response = await server.post('/tts/bytes', body({ transcript: 'Tiny.' }));
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(response.status, 200, bytes.toString());
    assert.equal(bytes.length, Math.round(5 * 0.05 * 24000) * 2);
  });

  test('a failing server is ejected, traffic avoids it, and a passing probe re-admits it', async () => {
    reset();
    a.healthy = false;
    await until(() => (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 1, { timeoutMs: 3000 });
    for (let i = 0; i < 4; i++) {
      const r = await server.post('/tts/bytes', body());
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
    assert.equal(a.requests.length, 0, 'the ejected server got nothing');
    a.healthy = true;
    await until(() => (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 2, { timeoutMs: 3000 });
  });

  test('no healthy server → 503 model_offline', async () => {
    a.healthy = false;
    b.healthy = false;
    await until(() => (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 0, { timeoutMs: 3000 });
    const response = await server.post('/tts/bytes', body());
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as any).error_code, 'model_offline');
    a.healthy = true;
    b.healthy = true;
    await until(() => (server.app.services.engines.get('gpu')!.info().upstreams as any).healthy === 2, { timeoutMs: 3000 });
  });

  test('SSE: a break after audio is an error event; a client disconnect aborts the upstream request', async () => {
    reset();
    a.script = ['reset-mid-body'];
    b.script = ['reset-mid-body'];
    const response = await server.post('/tts/sse', body({ transcript: 'This stream breaks after its first audio arrives here.' }));
    assert.equal(response.status, 200);
    const events = (await response.text()).split('\n\n').filter((x) => x.trim()).map((x) => JSON.parse(x.slice(6)));
    assert.equal(events[0].type, 'chunk');
    assert.equal(events.at(-1).type, 'error');
    assert.equal(events.at(-1).error_code, 'upstream_error');

    reset();
    const abortedBefore = a.aborted + b.aborted;
    const controller = new AbortController();
    const stream = await fetch(server.url + '/tts/sse', { method: 'POST', body: JSON.stringify(body({ transcript: 'A long answer nobody waits for. '.repeat(30) })), signal: controller.signal });
    await stream.body!.getReader().read();
    controller.abort();
    await until(() => a.aborted + b.aborted > abortedBefore, { timeoutMs: 3000 });
  });

  test('WebSocket: an upstream failure is an error event for its context', async () => {
    reset();
    a.script = ['status-500'];
    b.script = ['status-500'];
    const socket = await TestSocket.open(server.url);
    socket.send({ ...body({ transcript: 'Fails upstream.' }), context_id: 'up' });
    const error = await socket.waitFor((e) => e.context_id === 'up' && e.type === 'error');
    assert.equal(error.error_code, 'upstream_error');
    assert.equal(error.status_code, 502);
    socket.send({ ...body({ transcript: 'Works again.' }), context_id: 'up2' });
    await socket.waitFor((e) => e.context_id === 'up2' && e.type === 'done');
    socket.close();
  });

  test('a Cartesia-dialect peer: SSE upstream with timestamps, and /tts/bytes when speed is not 1', async () => {
    reset();
    const response = await server.post('/tts/sse', ttsBody({ model_id: 'peer-model', transcript: 'Peer speaks words.', add_timestamps: true, output_format: RAW }));
    const events = (await response.text()).split('\n\n').filter((x) => x.trim()).map((x) => JSON.parse(x.slice(6)));
    assert.equal(events.at(-1).type, 'done');
    const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['Peer', 'speaks', 'words.']);
    assert.equal(b.requests.at(-1)!.path, '/tts/sse');
    assert.deepEqual(b.requests.at(-1)!.body.voice, { mode: 'id', id: 'remote-sarah' });
    const slow = await server.post('/tts/bytes', ttsBody({ model_id: 'peer-model', transcript: 'Slower please.', generation_config: { speed: 0.8 }, output_format: RAW }));
    assert.equal(slow.status, 200);
    assert.equal(Buffer.from(await slow.arrayBuffer()).length, Math.round((14 * 0.05 * 24000) / 0.8) * 2);
    assert.equal(b.requests.at(-1)!.path, '/tts/bytes');
  });
});
