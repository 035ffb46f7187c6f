/**
 * @module test/upstream-hosted
 * The hosted-provider engines, `elevenlabs-upstream` and `deepgram-upstream`,
 * against a second Voicegate that speaks both dialects, behind a proxy that
 * records what the gateway sends: each engine serves /tts/bytes, SSE, the
 * WebSocket and a long-form job (word timestamps through ElevenLabs), in the
 * provider's wire shape with its key from the environment; and the key
 * appears in no log line, trace, metric or error body (the gateway exports
 * its spans to an OTLP/HTTP JSON receiver here, whose every body is searched).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { eventually, until } from './helpers/poll.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const EL_KEY = 'sk_el_secret_4f7a1c9e2b';
const DG_KEY = 'dg_secret_8d2e6b1a05';
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };

interface SpanEvent {
  name: string;
  attributes: Record<string, unknown>;
}
interface Span {
  traceId: string;
  name: string;
  events: SpanEvent[];
}

const attributesOf = (list: { key: string; value: Record<string, unknown> }[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));

/** An OTLP/HTTP JSON trace receiver on an ephemeral port: every body as sent, and its spans with their events. */
async function otlpReceiver(): Promise<{ url: string; bodies: string[]; spans: Span[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      for (const resource of JSON.parse(body).resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({ traceId: span.traceId, name: span.name, events: (span.events ?? []).map((e: any) => ({ name: e.name, attributes: attributesOf(e.attributes) })) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const OTEL = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'voicegate-gateway' };

describe('hosted-provider engines', { timeout: 120_000 }, () => {
  let provider: TestServer;
  let proxy: FaultProxy;
  let gateway: TestServer;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
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
    receiver = await otlpReceiver();
    // Only the gateway traces: the variables are set while it is created.
    const saved = Object.keys(OTEL).map((name) => [name, process.env[name]] as const);
    Object.assign(process.env, OTEL, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
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
        models: {
          'eleven-model': { extends: 'gepard-1.0', engine: 'eleven' },
          'aura-model': { extends: 'gepard-1.0', engine: 'aura' },
          'eleven-chain': { extends: 'gepard-1.0', engine: 'eleven', fallback: ['gepard-1.0'] },
        } as never,
        cache: { enabled: false },
      },
    }).finally(() => {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await provider?.close();
    await receiver?.close();
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

  test('no upstream key appears in logs, traces, metrics or error bodies; a request that fell over has a span event per model attempt', async () => {
    const bodies: string[] = [];
    for (const fault of [{ kind: 'status', status: 500 }, { kind: 'status', status: 401 }] as const) {
      proxy.fault = fault;
      for (const model of ['eleven-model', 'aura-model']) {
        const response = await gateway.post('/tts/bytes', ttsBody({ model_id: model }));
        assert.ok(response.status >= 500, `${model}: ${response.status}`);
        bodies.push(await response.text());
      }
    }
    // A chain whose provider refuses falls over to the local model; its trace names both attempts.
    proxy.fault = { kind: 'status', status: 503 };
    const traceId = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
    const chained = await gateway.post('/tts/bytes', ttsBody({ model_id: 'eleven-chain' }), { traceparent: `00-${traceId}-${'ab'.repeat(8)}-01` });
    assert.equal(chained.status, 200, await chained.clone().text());
    assert.equal(chained.headers.get('x-voicegate-model'), 'gepard-1.0');
    await chained.arrayBuffer();
    let session: Span | undefined;
    assert.ok(await eventually(() => !!(session = receiver.spans.find((s) => s.traceId === traceId && s.name === 'synthesis tts.bytes')), 20_000, 20), 'the synthesis span is exported');
    const attempts = session!.events.filter((e) => e.name === 'model attempt').map((e) => e.attributes);
    assert.deepEqual(
      attempts.map((a) => [a['voicegate.model'], a['voicegate.engine'], a['voicegate.attempt.outcome'], a['voicegate.attempt.reason'], a['voicegate.attempt.next']]),
      [
        ['eleven-chain', 'eleven', 'failed', 'refused', 'gepard-1.0'],
        ['gepard-1.0', attempts[1]?.['voicegate.engine'], 'served', undefined, undefined],
      ],
    );
    // The provider down: probes fail, the model goes offline.
    proxy.fault = { kind: 'down' };
    await until(() => (gateway.app.services.engines.get('eleven')!.info().upstreams as any).healthy === 0, { timeoutMs: 5000 });
    const offline = await gateway.post('/tts/bytes', ttsBody({ model_id: 'eleven-model' }));
    assert.equal(offline.status, 503);
    bodies.push(await offline.text());
    proxy.fault = { kind: 'pass' };
    const scrape = await gateway.app.services.metrics!.render();
    const admin = await (await fetch(`${gateway.url}/models`)).text();
    // The spans of the failed and refused requests too, once their batch is exported.
    assert.ok(await eventually(() => receiver.spans.filter((s) => s.name === 'synthesis tts.bytes').length >= 6, 20_000, 20), 'the synthesis spans are exported');
    const traces = receiver.bodies.join('\n');
    assert.ok(logs.length > 0 && scrape.length > 0 && traces.includes('eleven-chain'));
    for (const key of [EL_KEY, DG_KEY]) {
      for (const [where, text] of [['logs', logs], ['traces', traces], ['metrics', scrape], ['errors', bodies.join('\n')], ['models', admin]] as const) {
        assert.ok(!text.includes(key), `the key appears in ${where}`);
      }
    }
    await until(() => (gateway.app.services.engines.get('eleven')!.info().upstreams as any).healthy === 1, { timeoutMs: 5000 });
  });
});
