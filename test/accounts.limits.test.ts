/**
 * @module test/accounts.limits
 * Per-org concurrency (429 overloaded) and per-key rate (429 rate_limited)
 * with Retry-After; the Cartesia SDK retrying after a 429; concurrency slots
 * released however a request ends.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import { newOrg } from './helpers/accounts.js';
import { until } from './helpers/poll.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
before(async () => (server = await startServer({ config: { accounts: { enabled: true } } })));
after(() => server.close());

const LONG = ttsBody({ model_id: 'omnivoice', transcript: 'A longer text that takes a moment to generate. '.repeat(40) });

async function waitForSlots(orgId: string, expected: number): Promise<void> {
  const limits = server.app.services.accounts!.limits;
  let active = -1;
  await until(async () => (active = await limits.active(orgId)) === expected, { timeoutMs: 2_000, intervalMs: 10, what: () => `${expected} slots held (${active} now)` });
}

test('over the concurrency limit → 429 overloaded with Retry-After; the slot frees when the first ends', async () => {
  const org = await newOrg(server, { maxConcurrent: 1 });
  const first = server.post('/tts/bytes', LONG, org.auth);
  await waitForSlots(org.orgId, 1);
  const second = await server.post('/tts/bytes', ttsBody(), org.auth);
  const body = (await second.json()) as { error_code: string; message: string };
  assert.equal(second.status, 429);
  assert.equal(body.error_code, 'overloaded');
  assert.equal(body.message, 'too many active streams; retry later');
  assert.equal(second.headers.get('retry-after'), '1');
  assert.equal((await first).status, 200);
  await (await first).arrayBuffer();
  await waitForSlots(org.orgId, 0);
  const third = await server.post('/tts/bytes', ttsBody(), org.auth);
  assert.equal(third.status, 200);
  await third.arrayBuffer();
});

test('slots are released after errors and client disconnects', async () => {
  const org = await newOrg(server, { maxConcurrent: 2 });
  const bad = await server.post('/tts/bytes', ttsBody({ output_format: { container: 'mp3', sample_rate: 8000 } }), org.auth);
  assert.equal(bad.status, 400);
  await bad.arrayBuffer();
  await waitForSlots(org.orgId, 0);
  // A client that goes away mid-generation.
  const url = new URL(server.url + '/tts/bytes');
  const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...org.auth } });
  req.on('error', () => {});
  req.end(JSON.stringify(LONG));
  await waitForSlots(org.orgId, 1);
  req.destroy();
  await waitForSlots(org.orgId, 0);
});

test('over the rate limit → 429 rate_limited with Retry-After; the Cartesia SDK waits and succeeds', async () => {
  const org = await newOrg(server, { rateLimit: { requests: 2, per_seconds: 1 } });
  for (let i = 0; i < 2; i++) {
    const ok = await server.post('/tts/bytes', ttsBody({ transcript: 'Hi.' }), org.auth);
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
  }
  const limited = await server.post('/tts/bytes', ttsBody({ transcript: 'Hi.' }), org.auth);
  const body = (await limited.json()) as { error_code: string };
  assert.equal(limited.status, 429);
  assert.equal(body.error_code, 'rate_limited');
  assert.equal(limited.headers.get('retry-after'), '1');
  const retryMs = Number(limited.headers.get('retry-after-ms'));
  assert.ok(retryMs > 0 && retryMs <= 1000, String(retryMs));

  // The window is still full: the SDK's first attempt gets a 429 and it retries, honouring retry-after-ms.
  const client = new Cartesia({ apiKey: org.key, baseURL: server.url, maxRetries: 3 });
  const started = performance.now();
  const response = await client.tts.generate({
    model_id: 'gepard-1.0',
    transcript: 'Retried.',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 },
  });
  assert.ok((await response.arrayBuffer()).byteLength > 1000);
  assert.ok(performance.now() - started > 100, 'the SDK had to wait for the window');
  const rows = (await server.app.services.accounts!.store.ledger.list(org.orgId, { limit: 100 })).data;
  assert.equal(rows.filter((r) => r.kind === 'charge').length, 3, 'refused attempts were not charged');
});
