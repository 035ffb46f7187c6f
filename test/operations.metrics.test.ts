/**
 * @module test/operations.metrics
 * `GET /metrics` as an operator scrapes it: who may read it on the main
 * port (the admin token; never an API key), `metrics.public`, a port of its
 * own, what a scrape says after real requests on every transport (time to
 * first audio, requests by status, errors by code, credits equal to the
 * ledger, engine gauges, WebSocket connections, the store's WAL flushes), and two servers in one
 * process that keep their metrics apart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { balanceOf, newOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN = 'admin-token-for-metrics-tests';

/** The value of the first sample of `name` whose labels include `labels`, from a Prometheus text scrape. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[key] = value;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(url, { headers });
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** Scrapes until `check` holds (events are counted as they are published, a scrape may race the last one). */
async function scrapeUntil(url: string, headers: Record<string, string>, check: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const text = await scrape(url, headers);
    if (check(text)) return text;
    if (Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('on the main port metrics need the admin token; an API key never reads them', { timeout: 60_000 }, async () => {
  const server = await startServer({
    config: { accounts: { enabled: true, adminToken: ADMIN }, models: { pricey: { extends: 'gepard-1.0', creditMultiplier: 2.5 } } },
  });
  try {
    const org = await newOrg(server, { credits: 100_000 });
    const url = server.url + '/metrics';
    for (const headers of [{}, org.auth, { 'x-api-key': org.key }, { authorization: 'Bearer not-the-token' }, { authorization: ADMIN }]) {
      const refused = await fetch(url, { headers });
      assert.equal(refused.status, 401, JSON.stringify(headers));
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_admin_token');
    }
    const admin = { authorization: `Bearer ${ADMIN}` };
    const before = await balanceOf(server, org.orgId);

    const bytes = await server.post('/tts/bytes', ttsBody({ model_id: 'pricey', transcript: 'Eleven char' }), org.auth);
    assert.equal(bytes.status, 200);
    await bytes.arrayBuffer();
    const sse = await server.post('/tts/sse', ttsBody({ output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }), org.auth);
    assert.equal(sse.status, 200);
    await sse.text();
    const missing = await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: 'ghost' } }), org.auth);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
    const socket = await TestSocket.open(server.url, org.auth);
    socket.send({ ...ttsBody({ transcript: 'Hello there.' }), output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 }, context_id: 'c1' });
    await socket.waitFor((e) => e.type === 'done');

    const spent = before.balance - (await balanceOf(server, org.orgId)).balance;
    const text = await scrapeUntil(url, admin, (t) => sample(t, 'voicegate_websocket_connections') === 1 && sample(t, 'voicegate_requests_total', { endpoint: 'tts.websocket' }) === 1);
    assert.equal(sample(text, 'voicegate_requests_total', { endpoint: 'tts.bytes', model: 'pricey', status: '200' }), 1);
    assert.equal(sample(text, 'voicegate_requests_total', { endpoint: 'tts.sse', model: 'gepard-1.0', status: '200' }), 1);
    assert.equal(sample(text, 'voicegate_requests_total', { endpoint: 'tts.websocket', model: 'gepard-1.0', status: '200' }), 1);
    assert.equal(sample(text, 'voicegate_requests_total', { endpoint: 'tts.bytes', status: '404' }), 1);
    assert.equal(sample(text, 'voicegate_errors_total', { endpoint: 'tts.bytes', code: 'voice_not_found' }), 1);
    for (const endpoint of ['tts.bytes', 'tts.sse', 'tts.websocket']) {
      assert.equal(sample(text, 'voicegate_time_to_first_audio_seconds_count', { endpoint }), 1, endpoint);
    }
    assert.ok(sample(text, 'voicegate_time_to_first_audio_seconds_sum', { endpoint: 'tts.sse', model: 'gepard-1.0' })! > 0);
    // ⌈11 × 2.5⌉ for the clip, and every other charge: the same total the ledger took.
    assert.equal(sample(text, 'voicegate_credits_charged_total', { org: org.orgId, model: 'pricey' }), 28);
    const charged = ['pricey', 'gepard-1.0'].reduce((n, model) => n + (sample(text, 'voicegate_credits_charged_total', { org: org.orgId, model }) ?? 0), 0);
    assert.equal(charged, spent);
    assert.ok(sample(text, 'voicegate_audio_seconds_total', { model: 'gepard-1.0', engine: 'espeak' })! > 0);
    assert.ok(sample(text, 'voicegate_real_time_factor_count', { engine: 'espeak' })! >= 2);
    assert.equal(sample(text, 'voicegate_engine_queue_depth', { engine: 'espeak' }), 0);
    assert.equal(sample(text, 'voicegate_engine_busy_workers', { engine: 'espeak' }), 0);
    assert.equal(sample(text, 'voicegate_engine_ready', { engine: 'espeak' }), 1);
    assert.equal(sample(text, 'voicegate_websocket_connections'), 1);
    // Three charges, each durable before it was reported: at least three flushes of the WAL.
    assert.ok(sample(text, 'voicegate_store_wal_flushes_total')! >= 3, String(sample(text, 'voicegate_store_wal_flushes_total')));
    assert.ok([0, 1].includes(sample(text, 'voicegate_store_wal_flush_on_event_loop')!));
    assert.ok(sample(text, 'voicegate_store_wal_flush_average_seconds')! > 0);
    assert.ok(sample(text, 'process_resident_memory_bytes') !== undefined || sample(text, 'nodejs_heap_size_used_bytes') !== undefined);
    assert.doesNotMatch(text, /req_[0-9a-f]{24}|sk_/, 'no request ids or keys');

    socket.ws.close();
    await scrapeUntil(url, admin, (t) => sample(t, 'voicegate_websocket_connections') === 0);
    assert.equal(sample(await scrape(url, admin), 'voicegate_websocket_connections'), 0);
  } finally {
    await server.close();
  }
});

test('without an admin token metrics are protected, unless config makes them public; off, there are none', { timeout: 30_000 }, async () => {
  const closed = await startServer();
  const open = await startServer({ config: { metrics: { public: true } } });
  const off = await startServer({ config: { metrics: { enabled: false, public: true } } });
  try {
    assert.equal((await fetch(off.url + '/metrics')).status, 404);
    assert.equal(off.app.services.metrics, null);
    const refused = await fetch(closed.url + '/metrics');
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: string }).error, 'metrics_protected');
    const text = await scrape(open.url + '/metrics');
    assert.match(text, /# TYPE voicegate_time_to_first_audio_seconds histogram/);
    assert.match(text, /# TYPE voicegate_requests_total counter/);
    assert.match(text, /# TYPE voicegate_credits_charged_total counter/);
    assert.match(text, /# TYPE voicegate_engine_queue_depth gauge/);
  } finally {
    await Promise.all([closed.close(), open.close(), off.close()]);
  }
});

test('metrics on a port of their own: served there without authentication, not on the main port', { timeout: 30_000 }, async () => {
  const server = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN }, metrics: { port: 0 } } });
  try {
    const metricsUrl = server.app.metricsUrl!;
    assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.notEqual(new URL(metricsUrl).port, new URL(server.url).port);
    const main = await fetch(server.url + '/metrics', { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(main.status, 404);
    assert.equal(((await main.json()) as { error: string }).error, 'not_found');
    assert.match(await scrape(metricsUrl), /voicegate_info\{version="\d+\.\d+\.\d+"\} 1/);
    const post = await fetch(metricsUrl, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(((await post.json()) as { error: string }).error, 'method_not_allowed');
    const other = await fetch(metricsUrl.replace('/metrics', '/tts/bytes'));
    assert.equal(other.status, 404);
  } finally {
    await server.close();
  }
  await assert.rejects(fetch(server.app.metricsUrl!), 'the metrics port closes with the server');
});

test('two servers in one process keep their metrics apart', { timeout: 30_000 }, async () => {
  const servers: TestServer[] = [];
  try {
    for (let i = 0; i < 2; i++) servers.push(await startServer({ config: { metrics: { public: true } } }));
    const [a, b] = servers;
    const response = await a.post('/tts/bytes', ttsBody());
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const textA = await scrapeUntil(a.url + '/metrics', {}, (t) => sample(t, 'voicegate_requests_total', { endpoint: 'tts.bytes' }) === 1);
    assert.equal(sample(textA, 'voicegate_requests_total', { endpoint: 'tts.bytes', model: 'gepard-1.0', status: '200' }), 1);
    assert.equal(sample(await scrape(b.url + '/metrics'), 'voicegate_requests_total', { endpoint: 'tts.bytes' }), undefined);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});
