/**
 * @module test/accounts.billing
 * Exact credit billing on /tts/bytes: cost headers, one ledger row per
 * charge, the balance always equal to the sum of rows, postpaid gating under
 * a race, all-or-nothing charging (disconnect while downloading is charged,
 * an engine failure is not), streams charged at the first audio, and usage
 * visible only to its own organisation.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import type { EspeakPool } from '../src/engines/espeak/pool.js';
import { balanceOf, newOrg } from './helpers/accounts.js';
import { until } from './helpers/poll.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true, costHeaderAliasPrefix: 'x-hopper-' } } });
});
after(() => server.close());

async function ledgerRows(orgId: string) {
  return (await server.app.services.accounts!.store.ledger.list(orgId, { limit: 1000 })).data;
}

test('every response carries its exact cost and the balance left, also under an alias prefix', async () => {
  const org = await newOrg(server, { credits: 1000 });
  const transcript = 'Héllo 😀 world\n'; // 14 code points, 15 UTF-16 units
  const response = await server.post('/tts/bytes', ttsBody({ transcript }), org.auth);
  assert.equal(response.status, 200);
  await response.arrayBuffer();
  assert.equal(response.headers.get('x-request-credits'), '14');
  assert.equal(response.headers.get('x-request-cost-usd'), '0.00042');
  assert.equal(response.headers.get('x-credits-remaining'), '986');
  assert.equal(response.headers.get('x-credits-remaining-usd'), '0.02958');
  assert.equal(response.headers.get('x-hopper-request-cost-usd'), '0.00042');
  assert.equal(response.headers.get('x-hopper-credits-remaining-usd'), '0.02958');
  const rows = await ledgerRows(org.orgId);
  assert.equal(rows.length, 2);
  const charge = rows[0];
  assert.equal(charge.kind, 'charge');
  assert.equal(charge.credits, -14);
  assert.equal(charge.characters, 14);
  assert.equal(charge.model, 'gepard-1.0');
  assert.equal(charge.endpoint, 'tts.bytes');
  assert.equal(charge.keyId, org.keyId);
  assert.equal(charge.requestId, response.headers.get('x-request-id'));
  assert.deepEqual(await balanceOf(server, org.orgId), { balance: 986, sum: 986 });
});

test('errors are not charged and carry no cost headers', async () => {
  const org = await newOrg(server, { credits: 1000 });
  const response = await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: 'nobody' } }), org.auth);
  assert.equal(response.status, 404);
  assert.equal(response.headers.get('x-request-cost-usd'), null);
  await response.arrayBuffer();
  assert.deepEqual(await balanceOf(server, org.orgId), { balance: 1000, sum: 1000 });
});

test('many concurrent requests racing a small balance: no double or lost charge, then 402', async () => {
  const org = await newOrg(server, { credits: 10 });
  const responses = await Promise.all(
    Array.from({ length: 12 }, () => server.post('/tts/bytes', ttsBody({ transcript: 'Hey.' }), org.auth)),
  );
  const statuses = await Promise.all(responses.map(async (r) => (await r.arrayBuffer(), r.status)));
  const served = statuses.filter((s) => s === 200).length;
  assert.ok(served >= 3, `${served} served`);
  assert.ok(statuses.every((s) => s === 200 || s === 402), statuses.join(','));
  const { balance, sum } = await balanceOf(server, org.orgId);
  assert.equal(balance, sum, 'balance equals the sum of rows');
  assert.equal(balance, 10 - 4 * served, 'every served request charged once');
  assert.equal((await ledgerRows(org.orgId)).filter((r) => r.kind === 'charge').length, served);
  assert.ok(balance <= 0);
  const refused = await server.post('/tts/bytes', ttsBody({ transcript: 'Hey.' }), org.auth);
  const body = (await refused.json()) as { error_code: string };
  assert.equal(refused.status, 402);
  assert.equal(body.error_code, 'insufficient_credits');
  await server.app.services.accounts!.admin.addCredits(org.orgId, 100, 'top-up');
  const again = await server.post('/tts/bytes', ttsBody({ transcript: 'Hey.' }), org.auth);
  assert.equal(again.status, 200);
  await again.arrayBuffer();
});

test('a client that disconnects while downloading a clip is charged', async () => {
  const org = await newOrg(server, { credits: 100_000 });
  const transcript = 'A long clip to download slowly. '.repeat(40);
  const url = new URL(server.url + '/tts/bytes');
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' } },
      (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          res.destroy();
          resolve();
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(ttsBody({ model_id: 'omnivoice', transcript })));
  });
  // A clip is charged before its first byte is sent; the books are read once the charge shows.
  const { balance, sum } = await until(async () => {
    const books = await balanceOf(server, org.orgId);
    return books.balance !== 100_000 && books;
  }, { what: 'the clip charged' });
  assert.equal(balance, 100_000 - [...transcript].length);
  assert.equal(sum, balance);
});

test('a failed generation is not charged and returns no audio', async () => {
  const org = await newOrg(server, { credits: 100_000 });
  const pool = server.app.services.engines.get('espeak') as EspeakPool;
  const pending = server.post('/tts/bytes', ttsBody({ model_id: 'omnivoice', transcript: 'Keep the engine busy for a while. '.repeat(100) }), org.auth);
  await until(() => pool.crashBusyWorker(), { timeoutMs: 5_000, intervalMs: 5, what: 'a busy worker to crash' });
  const response = await pending;
  assert.equal(response.status, 502);
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  await response.arrayBuffer();
  assert.deepEqual(await balanceOf(server, org.orgId), { balance: 100_000, sum: 100_000 });
  await until(() => pool.isReady(), { timeoutMs: 10_000, what: 'the pool ready again' });
});

test('a stream is charged once its first audio is out, with cost headers on the response', async () => {
  const org = await newOrg(server, { credits: 1000 });
  const response = await server.post(
    '/tts/bytes',
    ttsBody({ stream: true, transcript: 'Streamed and charged.', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } }),
    org.auth,
  );
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-request-credits'), '21');
  assert.equal(response.headers.get('x-credits-remaining'), '979');
  assert.ok((await response.arrayBuffer()).byteLength > 16000);
  const rows = await ledgerRows(org.orgId);
  assert.equal(rows[0].endpoint, 'tts.bytes.stream');
});

test('GET /usage shows the caller its own organisation only, paged', async () => {
  const a = await newOrg(server, { credits: 500 });
  const b = await newOrg(server, { credits: 700 });
  for (const transcript of ['One.', 'Two.', 'Three.']) {
    const response = await server.post('/tts/bytes', ttsBody({ transcript }), a.auth);
    await response.arrayBuffer();
  }
  const usageA = (await (await fetch(server.url + '/usage?limit=2', { headers: a.auth })).json()) as any;
  assert.equal(usageA.org.id, a.orgId);
  assert.equal(usageA.org.balance.credits, 500 - 4 - 4 - 6);
  assert.equal(usageA.data.length, 2);
  assert.equal(usageA.has_more, true);
  assert.deepEqual(usageA.data.map((e: any) => e.characters), [6, 4]);
  const next = (await (await fetch(`${server.url}/usage?limit=2&starting_after=${usageA.data[1].id}`, { headers: a.auth })).json()) as any;
  assert.deepEqual(next.data.map((e: any) => e.kind), ['charge', 'credit']);
  assert.equal(next.has_more, false);
  const usageB = (await (await fetch(server.url + '/usage', { headers: b.auth })).json()) as any;
  assert.equal(usageB.org.id, b.orgId);
  assert.deepEqual(usageB.data.map((e: any) => e.kind), ['credit']);
  assert.ok(!JSON.stringify(usageB).includes(a.orgId), 'nothing of org A is visible to B');
  assert.equal((await fetch(server.url + '/usage')).status, 401);
});
