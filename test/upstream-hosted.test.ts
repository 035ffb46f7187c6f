/**
 * @module test/upstream-hosted
 * The hosted-provider engines, `elevenlabs-upstream` and `deepgram-upstream`,
 * against a second Voicegate that speaks both dialects, behind a proxy that
 * records what the gateway sends: each engine serves /tts/bytes, SSE, the
 * WebSocket and a long-form job (word timestamps through ElevenLabs), in the
 * provider's wire shape with its key from the environment; and the key
 * appears in no log line, metric or error body.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { eventually, until } from './helpers/poll.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const EL_KEY = 'sk_el_secret_4f7a1c9e2b';
const DG_KEY = 'dg_secret_8d2e6b1a05';
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };

describe('hosted-provider engines', { timeout: 120_000 }, () => {
  let provider: TestServer;
  let proxy: FaultProxy;
  let gateway: TestServer;
  let logs = '';

  before(async () => {
    provider = await startServer();
    proxy = await startFaultProxy(provider.url);
    process.env.VG_TEST_ELEVENLABS_KEY = EL_KEY;
    process.env.VG_TEST_DEEPGRAM_KEY = DG_KEY;
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logs += String(chunk);
        done();
      },
    });
    gateway = await startServer({
      logDestination: destination,
      logLevel: 'trace',
      config: {
        engines: {
          eleven: {
            type: 'elevenlabs-upstream',
            upstreams: [{ url: proxy.url, apiKeyEnv: 'VG_TEST_ELEVENLABS_KEY' }],
            model: 'eleven_flash_v2_5',
            voices: { sarah: 'FGY2WhTYpPnrIDTdsKH5' },
            probeIntervalMs: 1000,
          },
          aura: {
            type: 'deepgram-upstream',
            upstreams: [{ url: proxy.url, apiKeyEnv: 'VG_TEST_DEEPGRAM_KEY' }],
            sampleRate: 16000,
            voices: { sarah: 'aura-2-thalia-en' },
            probeIntervalMs: 1000,
            // Deepgram's model listing asks for its own key scheme on this provider; readiness is the probe here.
            healthPath: '/readyz',
          },
        } as never,
        models: { 'eleven-model': { extends: 'gepard-1.0', engine: 'eleven' }, 'aura-model': { extends: 'gepard-1.0', engine: 'aura' } },
        cache: { enabled: false },
      },
    });
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await provider?.close();
    delete process.env.VG_TEST_ELEVENLABS_KEY;
    delete process.env.VG_TEST_DEEPGRAM_KEY;
  });

  const speech = () => proxy.requests.filter((r) => r.method === 'POST');

  test('ElevenLabs: /tts/bytes streams raw PCM at the engine rate from the streaming endpoint, with the key in xi-api-key', async () => {
    proxy.requests.length = 0;
    const response = await gateway.post('/tts/bytes', ttsBody({ model_id: 'eleven-model', transcript: 'Hello from the hosted voice.', output_format: RAW }));
    assert.equal(response.status, 200, await response.clone().text());
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.ok(bytes.length > 24000 * 2 * 0.5, `${bytes.length} bytes`);
    const [sent] = speech();
    assert.equal(sent.path, '/v1/text-to-speech/FGY2WhTYpPnrIDTdsKH5/stream?output_format=pcm_24000');
    assert.equal(sent.headers['xi-api-key'], EL_KEY);
    // The health probe costs nothing: GET /v1/models with the key.
    await until(() => proxy.requests.some((r) => r.method === 'GET' && r.path === '/v1/models' && r.headers['xi-api-key'] === EL_KEY), { timeoutMs: 5000 });
  });

  test('ElevenLabs: SSE with word timestamps reads them from /stream/with-timestamps', async () => {
    proxy.requests.length = 0;
    const response = await gateway.post('/tts/sse', ttsBody({ model_id: 'eleven-model', transcript: 'Alpha beta gamma delta.', add_timestamps: true, output_format: RAW }));
    assert.equal(response.status, 200);
    const events = (await response.text())
      .split('\n\n')
      .map((block) => block.split('\n').find((l) => l.startsWith('data:')))
      .filter((l): l is string => !!l)
      .map((l) => JSON.parse(l.slice(5)));
    const words = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.words);
    assert.deepEqual(words, ['Alpha', 'beta', 'gamma', 'delta.']);
    const starts = events.filter((e) => e.type === 'timestamps').flatMap((e) => e.word_timestamps.start);
    assert.ok(starts.every((s: number, i: number) => i === 0 || s >= starts[i - 1]), `${starts}`);
    assert.ok(events.some((e) => e.type === 'chunk'));
    assert.equal(events.at(-1).type, 'done');
    assert.match(speech()[0].path, /^\/v1\/text-to-speech\/FGY2WhTYpPnrIDTdsKH5\/stream\/with-timestamps\?output_format=pcm_24000$/);
  });

  test('Deepgram: /tts/bytes and SSE from /v1/speak, linear16 without a container, the Aura name per voice, the key as Token', async () => {
    proxy.requests.length = 0;
    const response = await gateway.post('/tts/bytes', ttsBody({ model_id: 'aura-model', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }));
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok((await response.arrayBuffer()).byteLength > 16000);
    const [sent] = speech();
    assert.equal(sent.path, '/v1/speak?model=aura-2-thalia-en&encoding=linear16&container=none&sample_rate=16000');
    assert.equal(sent.headers.authorization, `Token ${DG_KEY}`);
    const sse = await gateway.post('/tts/sse', ttsBody({ model_id: 'aura-model', output_format: RAW }));
    assert.equal(sse.status, 200);
    assert.match(await sse.text(), /"type":"done"/);
  });

  for (const model of ['eleven-model', 'aura-model']) {
    test(`${model}: a WebSocket turn and a long-form job`, async () => {
      const socket = await TestSocket.open(gateway.url);
      try {
        socket.send({ model_id: model, voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: 'c1', transcript: 'The first sentence. And the second.', add_timestamps: model === 'eleven-model' });
        await socket.waitFor((e) => e.context_id === 'c1' && e.type === 'done', 20_000);
        assert.ok(socket.audio('c1').length > 24000);
        if (model === 'eleven-model') assert.ok(socket.of('c1', 'timestamps').length > 0, 'word timestamps on the socket');
      } finally {
        socket.close();
      }
      const submitted = await gateway.post('/tts/jobs', ttsBody({ model_id: model, transcript: 'A long text in two parts. '.repeat(20), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 } }));
      assert.equal(submitted.status, 202, await submitted.clone().text());
      const { id } = (await submitted.json()) as { id: string };
      let job: any;
      assert.ok(await eventually(async () => ['succeeded', 'failed'].includes((job = (await (await fetch(`${gateway.url}/tts/jobs/${id}`)).json()) as any).status), 60_000, 50));
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const audio = await fetch(`${gateway.url}/tts/jobs/${id}/audio`);
      assert.equal(audio.status, 200);
      assert.ok((await audio.arrayBuffer()).byteLength > 24000 * 2);
    });
  }

  test('no upstream key appears in logs, metrics or error bodies', async () => {
    const bodies: string[] = [];
    for (const fault of [{ kind: 'status', status: 500 }, { kind: 'status', status: 401 }] as const) {
      proxy.fault = fault;
      for (const model of ['eleven-model', 'aura-model']) {
        const response = await gateway.post('/tts/bytes', ttsBody({ model_id: model }));
        assert.ok(response.status >= 500, `${model}: ${response.status}`);
        bodies.push(await response.text());
      }
    }
    // The provider down: probes fail, the model goes offline.
    proxy.fault = { kind: 'down' };
    await until(() => (gateway.app.services.engines.get('eleven')!.info().upstreams as any).healthy === 0, { timeoutMs: 5000 });
    const offline = await gateway.post('/tts/bytes', ttsBody({ model_id: 'eleven-model' }));
    assert.equal(offline.status, 503);
    bodies.push(await offline.text());
    proxy.fault = { kind: 'pass' };
    const scrape = await gateway.app.services.metrics!.render();
    const admin = await (await fetch(`${gateway.url}/models`)).text();
    assert.ok(logs.length > 0 && scrape.length > 0);
    for (const key of [EL_KEY, DG_KEY]) {
      for (const [where, text] of [['logs', logs], ['metrics', scrape], ['errors', bodies.join('\n')], ['models', admin]] as const) {
        assert.ok(!text.includes(key), `the key appears in ${where}`);
      }
    }
    await until(() => (gateway.app.services.engines.get('eleven')!.info().upstreams as any).healthy === 1, { timeoutMs: 5000 });
  });
});
