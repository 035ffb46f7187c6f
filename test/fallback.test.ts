/**
 * @module test/fallback
 * Fallback chains and circuit breakers. The primary model is served by an
 * ElevenLabs-dialect engine whose provider — a second Voicegate — sits
 * behind a fault-injecting proxy; the chain's next model is local eSpeak.
 * Under the provider killed, 503s, 429s, first audio held past the timeout,
 * clients on /tts/bytes, SSE, the WebSocket and jobs get their audio from
 * the fallback with no visible failure; a stream cut after its first audio
 * ends with an error event and is not re-served; client errors never fall
 * over; the breaker opens and closes; the ledger charges the model that
 * served, at its price.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { creditsFor } from '../src/accounts/pricing.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { eventually, until } from './helpers/poll.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };
const PREMIUM = 3;
const LOCAL = 0.5;
// Generous: a loaded machine must not make a healthy primary late.
const TIMEOUT_MS = 2000;

function sseEvents(text: string): any[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data:')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(5)));
}

describe('fallback chains', { timeout: 180_000 }, () => {
  let provider: TestServer;
  let proxy: FaultProxy;
  /** In front of the second hosted engine, with no faults: it records what that engine is sent. */
  let backupProxy: FaultProxy;
  let gateway: TestServer;
  let org: TestOrg;

  before(async () => {
    provider = await startServer();
    proxy = await startFaultProxy(provider.url);
    backupProxy = await startFaultProxy(provider.url);
    gateway = await startServer({
      config: {
        accounts: { enabled: true, adminToken: 'fallback-admin-token' },
        engines: {
          eleven: {
            type: 'elevenlabs-upstream',
            upstreams: [{ url: proxy.url, apiKey: 'sk_fallback_test' }],
            model: 'eleven_flash_v2_5',
            sampleRate: 22050,
            voices: { sarah: 'sarah', emma: 'emma' },
            probeIntervalMs: 1000,
            // Ejection is the pool's own concern; these tests look at the chain and the breaker.
            ejectAfterFailures: 1000,
            firstAudioTimeoutMs: TIMEOUT_MS,
          },
          'eleven-guarded': {
            type: 'elevenlabs-upstream',
            upstreams: [{ url: proxy.url }],
            model: 'eleven_flash_v2_5',
            sampleRate: 22050,
            voices: { sarah: 'sarah' },
            probeIntervalMs: 1000,
            ejectAfterFailures: 1000,
            breaker: { failures: 3, openMs: 400 },
          },
          // A second hosted engine that has only Emma.
          backup: {
            type: 'elevenlabs-upstream',
            upstreams: [{ url: backupProxy.url }],
            model: 'eleven_flash_v2_5',
            sampleRate: 22050,
            voices: { emma: 'emma' },
            probeIntervalMs: 1000,
          },
        } as never,
        models: {
          premium: { extends: 'gepard-1.0', engine: 'eleven', creditMultiplier: PREMIUM, fallback: ['local'] },
          guarded: { extends: 'gepard-1.0', engine: 'eleven-guarded', creditMultiplier: PREMIUM, fallback: ['local'] },
          local: { extends: 'gepard-1.0', engine: 'espeak', creditMultiplier: LOCAL },
          mapped: { extends: 'gepard-1.0', engine: 'eleven', fallback: ['backup-model'], fallbackVoices: { sarah: 'emma' } },
          hedged: { extends: 'gepard-1.0', engine: 'eleven', creditMultiplier: PREMIUM, fallback: ['local'], hedgeAfterMs: 150 },
          'backup-model': { extends: 'gepard-1.0', engine: 'backup', defaultVoice: null },
          defaulted: { extends: 'gepard-1.0', engine: 'eleven', fallback: ['backup-default'] },
          'backup-default': { extends: 'gepard-1.0', engine: 'backup', defaultVoice: 'emma' },
          // Its first fallback serves 8 kHz clips only: a 22,050 Hz clip skips it.
          'narrow-chain': { extends: 'gepard-1.0', engine: 'eleven', fallback: ['narrow', 'local'] },
          narrow: { extends: 'gepard-1.0', engine: 'espeak', clip: { sampleRates: [8000] } },
        },
        cache: { enabled: false },
      },
    });
    org = await newOrg(gateway, { credits: 10_000_000 });
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await backupProxy?.close();
    await provider?.close();
  });

  const rows = async () => (await gateway.app.services.accounts!.store.ledger.list(org.orgId, { limit: 1000 })).data as any[];
  const fallbacks = async (reason: string, from = 'premium') => {
    const scrape = await gateway.app.services.metrics!.render();
    const line = scrape.split('\n').find((l) => l.startsWith(`voicegate_fallbacks_total{from="${from}",to="local",reason="${reason}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const healthy = (engine = 'eleven') => until(() => (gateway.app.services.engines.get(engine)!.info().upstreams as any).healthy === 1, { timeoutMs: 10_000 });

  /** Every kind of HTTP request at once, as a loaded gateway sees them; each must succeed, served by `model`. */
  async function load(model: string, transcript = 'The show must go on, whatever happens upstream.') {
    const responses = await Promise.all([
      gateway.post('/tts/bytes', ttsBody({ model_id: 'premium', transcript }), org.auth),
      gateway.post('/tts/bytes', ttsBody({ model_id: 'premium', transcript, stream: true, output_format: RAW }), org.auth),
      gateway.post('/tts/sse', ttsBody({ model_id: 'premium', transcript, output_format: RAW }), org.auth),
      gateway.post('/tts/bytes', ttsBody({ model_id: 'premium', transcript }), org.auth),
    ]);
    for (const [i, response] of responses.entries()) {
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200, `request ${i}: ${body.toString().slice(0, 300)}`);
      if (response.headers.get('x-voicegate-model') !== model) {
        const scrape = await gateway.app.services.metrics!.render();
        assert.fail(`request ${i} served by ${response.headers.get('x-voicegate-model')}: ${scrape.split('\n').filter((l) => l.startsWith('voicegate_fallbacks_total')).join('; ')}`);
      }
      const characters = [...transcript].length;
      assert.equal(response.headers.get('x-request-credits'), String(creditsFor(characters, model === 'local' ? LOCAL : PREMIUM)), `request ${i}: the served model's price`);
      assert.ok(body.length > 10_000, `request ${i}: ${body.length} bytes`);
      if (i === 2) {
        const events = sseEvents(body.toString());
        assert.equal(events.at(-1).type, 'done', `SSE ends done: ${JSON.stringify(events.at(-1))}`);
        assert.equal(events.at(-1).model, model, 'done names the model that served');
        assert.ok(!events.some((e) => e.type === 'error'));
      }
    }
  }

  test('a healthy primary serves, named in x-voicegate-model and charged at its price', async () => {
    const before = (await rows()).length;
    await load('premium');
    const charged = (await rows()).slice(0, (await rows()).length - before);
    assert.equal(charged.length, 4);
    for (const row of charged) {
      assert.equal(row.model, 'premium');
      assert.equal(row.credits, -creditsFor(row.characters, PREMIUM));
    }
  });

  for (const [name, fault, reason] of [
    ['503s', { kind: 'status', status: 503 }, 'refused'],
    ['429s with Retry-After', { kind: 'status', status: 429, retryAfter: '1' }, 'rate_limited'],
    ['first audio held past firstAudioTimeoutMs', { kind: 'delay', ms: 8000 }, 'timeout'],
  ] as const) {
    test(`${name}: every request is served by the fallback, charged once at its price`, async () => {
      await healthy();
      proxy.fault = fault;
      const taken = await fallbacks(reason);
      const before = (await rows()).length;
      const started = performance.now();
      try {
        await load('local');
      } finally {
        proxy.fault = { kind: 'pass' };
      }
      if (reason === 'timeout') assert.ok(performance.now() - started < 7000, 'the chain did not wait for the held answer');
      assert.equal(await fallbacks(reason), taken + 4);
      const all = await rows();
      const charged = all.slice(0, all.length - before);
      assert.equal(charged.length, 4, 'one charge per request');
      for (const row of charged) {
        assert.equal(row.model, 'local');
        assert.equal(row.credits, -creditsFor(row.characters, LOCAL));
      }
    });
  }

  test('the provider killed: probes fail and the chain serves from the fallback (offline or connect error)', async () => {
    proxy.fault = { kind: 'down' };
    try {
      await load('local');
      await until(() => (gateway.app.services.engines.get('eleven')!.info().upstreams as any).healthy === 0, { timeoutMs: 5000 });
      await load('local');
      assert.ok((await fallbacks('offline')) >= 4);
    } finally {
      proxy.fault = { kind: 'pass' };
    }
    await healthy();
  });

  test('a WebSocket turn and a long-form job fall over too', async () => {
    await healthy();
    proxy.fault = { kind: 'status', status: 503 };
    try {
      const socket = await TestSocket.open(gateway.url, org.auth);
      try {
        socket.send({ model_id: 'premium', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: 'w', transcript: 'First sentence here. And a second one.' });
        const done = await socket.waitFor((e) => e.context_id === 'w' && (e.type === 'done' || e.type === 'error'), 20_000);
        assert.equal(done.type, 'done', JSON.stringify(done));
        assert.equal(done.model, 'local', 'the turn names the model that made its audio');
        assert.ok(socket.audio('w').length > 10_000);
      } finally {
        socket.close();
      }
      const submitted = await gateway.post('/tts/jobs', ttsBody({ model_id: 'premium', transcript: 'A longer text in parts. '.repeat(15) }), org.auth);
      assert.equal(submitted.status, 202, await submitted.clone().text());
      const { id } = (await submitted.json()) as { id: string };
      let job: any;
      assert.ok(await eventually(async () => ['succeeded', 'failed'].includes((job = (await (await fetch(`${gateway.url}/tts/jobs/${id}`, { headers: org.auth })).json()) as any).status), 60_000, 50));
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
    } finally {
      proxy.fault = { kind: 'pass' };
    }
  });

  test('a WebSocket turn falls over between sentences: the first spoken by the primary, the next by the fallback; priced by the first', async () => {
    await healthy();
    const taken = await fallbacks('refused');
    const before = (await rows()).length;
    const socket = await TestSocket.open(gateway.url, org.auth);
    try {
      const ctx = { model_id: 'premium', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: 'between' };
      socket.send({ ...ctx, transcript: 'The first sentence comes from the primary. ', continue: true, flush: true });
      await socket.waitFor((e) => e.context_id === 'between' && e.type === 'flush_done', 20_000);
      const first = socket.audio('between').length;
      assert.ok(first > 10_000);
      assert.equal(await fallbacks('refused'), taken, 'no fall-over yet');
      proxy.fault = { kind: 'status', status: 503 };
      socket.send({ ...ctx, transcript: 'The second one comes from the fallback.', continue: false });
      const done = await socket.waitFor((e) => e.context_id === 'between' && (e.type === 'done' || e.type === 'error'), 20_000);
      assert.equal(done.type, 'done', JSON.stringify(done));
      assert.equal(done.model, 'premium', 'the turn is named and priced by the model of its first audio');
      assert.ok(socket.audio('between').length > first + 10_000, 'the second sentence was spoken');
      assert.equal(await fallbacks('refused'), taken + 1, 'the second sentence fell over');
    } finally {
      proxy.fault = { kind: 'pass' };
      socket.close();
    }
    const all = await rows();
    const charged = all.slice(0, all.length - before);
    assert.ok(charged.length >= 1 && charged.every((row) => row.model === 'premium' && row.credits === -creditsFor(row.characters, PREMIUM)), JSON.stringify(charged));
  });

  test('a stream cut after its first audio reached the client ends with an error event and is not re-served', async () => {
    await healthy();
    proxy.fault = { kind: 'cut', afterBytes: 16_000 };
    const before = (await rows()).length;
    try {
      const response = await gateway.post('/tts/sse', ttsBody({ model_id: 'premium', transcript: 'A long sentence that keeps going for quite a while. '.repeat(6), output_format: RAW }), org.auth);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-voicegate-model'), 'premium');
      const events = sseEvents(await response.text());
      assert.ok(events.some((e) => e.type === 'chunk'), 'audio arrived first');
      assert.equal(events.at(-1).type, 'error', JSON.stringify(events.at(-1)));
    } finally {
      proxy.fault = { kind: 'pass' };
    }
    // Charged as a delivered stream is, at the serving model's price.
    const all = await rows();
    const charged = all.slice(0, all.length - before);
    assert.equal(charged.length, 1);
    assert.equal(charged[0].model, 'premium');
  });

  test("client errors never fall over: an unknown voice, text over the limit, the provider's 400", async () => {
    const unknown = await gateway.post('/tts/bytes', ttsBody({ model_id: 'premium', voice: { mode: 'id', id: 'nobody-here' } }), org.auth);
    assert.equal(unknown.status, 404);
    const max = gateway.app.services.models.get('premium')!.maxTranscriptChars;
    const long = await gateway.post('/tts/bytes', ttsBody({ model_id: 'premium', transcript: 'x '.repeat(max) }), org.auth);
    assert.equal(long.status, 400);
    assert.equal(((await long.json()) as any).error_code, 'input_too_long');
    await healthy();
    proxy.fault = { kind: 'status', status: 400 };
    try {
      const refused = await gateway.post('/tts/bytes', ttsBody({ model_id: 'premium' }), org.auth);
      assert.equal(refused.status, 502);
      assert.equal(((await refused.json()) as any).error_code, 'upstream_error');
    } finally {
      proxy.fault = { kind: 'pass' };
    }
  });

  test('the breaker opens after consecutive failures, skips the engine, then one probe closes it', async () => {
    await healthy('eleven-guarded');
    const state = async () => {
      const scrape = await gateway.app.services.metrics!.render();
      return Number(scrape.split('\n').find((l) => l.startsWith('voicegate_engine_breaker_state{engine="eleven-guarded"}'))?.split(' ').at(-1));
    };
    assert.equal(await state(), 0);
    proxy.fault = { kind: 'status', status: 503 };
    const requests = proxy.requests.length;
    for (let i = 0; i < 3; i++) {
      const response = await gateway.post('/tts/bytes', ttsBody({ model_id: 'guarded' }), org.auth);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    assert.equal(await state(), 1, 'open after 3 failures');
    const admin = (await (await fetch(`${gateway.url}/admin/engines`, { headers: { authorization: 'Bearer fallback-admin-token' } })).json()) as any;
    assert.equal(admin.engines.find((e: any) => e.id === 'eleven-guarded').breaker.state, 'open', JSON.stringify(admin).slice(0, 300));
    const sent = proxy.requests.filter((r, i) => i >= requests && r.method === 'POST').length;
    // While open, requests skip the engine: the provider sees none of them.
    const skipped = await gateway.post('/tts/bytes', ttsBody({ model_id: 'guarded' }), org.auth);
    assert.equal(skipped.status, 200);
    assert.equal(skipped.headers.get('x-voicegate-model'), 'local');
    await skipped.arrayBuffer();
    assert.equal(proxy.requests.filter((r, i) => i >= requests && r.method === 'POST').length, sent);
    assert.ok((await fallbacks('breaker_open', 'guarded')) >= 1);
    // The provider is back; once openMs has passed one request probes it and closes the breaker.
    proxy.fault = { kind: 'pass' };
    await until(async () => (await state()) === 2, { timeoutMs: 3000 });
    const probe = await gateway.post('/tts/bytes', ttsBody({ model_id: 'guarded' }), org.auth);
    assert.equal(probe.status, 200);
    assert.equal(probe.headers.get('x-voicegate-model'), 'guarded');
    await probe.arrayBuffer();
    assert.equal(await state(), 0);
  });

  test("the voice: the fallback's own when it has it, else the chain's map, else the fallback's default; a model that cannot serve the format is skipped", async () => {
    await healthy();
    await healthy('backup');
    proxy.fault = { kind: 'status', status: 503 };
    try {
      for (const [model, voice, served] of [
        ['mapped', 'emma', 'emma'],
        ['mapped', 'sarah', 'emma'],
        ['defaulted', 'sarah', 'emma'],
      ] as const) {
        backupProxy.requests.length = 0;
        const response = await gateway.post('/tts/bytes', ttsBody({ model_id: model, voice: { mode: 'id', id: voice } }), org.auth);
        assert.equal(response.status, 200, `${model}/${voice}: ${await response.clone().text()}`);
        await response.arrayBuffer();
        assert.equal(response.headers.get('x-voicegate-model'), model === 'mapped' ? 'backup-model' : 'backup-default');
        const sent = backupProxy.requests.filter((r) => r.method === 'POST');
        assert.equal(sent.length, 1);
        assert.match(sent[0].path, new RegExp(`^/v1/text-to-speech/${served}/stream`), `${model}/${voice}`);
      }
      const skipped = await gateway.post('/tts/bytes', ttsBody({ model_id: 'narrow-chain' }), org.auth);
      assert.equal(skipped.status, 200);
      assert.equal(skipped.headers.get('x-voicegate-model'), 'local');
      await skipped.arrayBuffer();
    } finally {
      proxy.fault = { kind: 'pass' };
    }
  });

  test('hedging: a primary with no audio after hedgeAfterMs runs the next model too; the first audio wins, only the winner is charged', async () => {
    await healthy();
    const before = (await rows()).length;
    proxy.fault = { kind: 'delay', ms: 8000 };
    try {
      const started = performance.now();
      const response = await gateway.post('/tts/sse', ttsBody({ model_id: 'hedged', output_format: RAW }), org.auth);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-voicegate-model'), 'local');
      const events = sseEvents(await response.text());
      // Well before the engine's firstAudioTimeoutMs: the fallback did not wait for it.
      assert.ok(performance.now() - started < TIMEOUT_MS, `${performance.now() - started} ms`);
      assert.equal(events.at(-1).type, 'done');
      assert.equal(events.at(-1).model, 'local');
      const clip = await gateway.post('/tts/bytes', ttsBody({ model_id: 'hedged' }), org.auth);
      assert.equal(clip.status, 200);
      assert.equal(clip.headers.get('x-voicegate-model'), 'local');
      await clip.arrayBuffer();
    } finally {
      proxy.fault = { kind: 'pass' };
    }
    const all = await rows();
    const charged = all.slice(0, all.length - before);
    assert.equal(charged.length, 2, 'one charge per request: the winner only');
    for (const row of charged) assert.ok(row.model === 'local' && row.credits === -creditsFor(row.characters, LOCAL), JSON.stringify(row));
    // A healthy primary is charged as itself, hedge or not.
    const healthyResponse = await gateway.post('/tts/bytes', ttsBody({ model_id: 'hedged' }), org.auth);
    assert.equal(healthyResponse.status, 200);
    await healthyResponse.arrayBuffer();
  });
});
