/**
 * @module test/lifecycle.mixed
 * 200 concurrent requests over all four transports (/tts/bytes whole and
 * progressive, /tts/sse, /v1/audio/speech whole and SSE, WebSocket turns of
 * up to three batches), a third of them abandoned by their client at a
 * random step. Afterwards the books must balance exactly: balance = initial
 * − Σ charges, no charge key twice, every row as its endpoint's rule says,
 * every request that finished charged exactly once, nothing left held.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { auditBooks, mixedLoad } from './helpers/mixed-load.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let org: TestOrg;
const INITIAL = 1_000_000;
before(async () => {
  // A burst of 200 on two workers queues for longer than the default deadline on a loaded machine; the books are what is tested here.
  server = await startServer({ config: { accounts: { enabled: true }, engines: { espeak: { type: 'espeak', workers: 2, queueTimeoutMs: 60_000 } } } });
  org = await newOrg(server, { credits: INITIAL });
});
after(() => server.close());

test('200 concurrent mixed requests with random aborts keep the books exact', { timeout: 120_000 }, async () => {
  const outcomes = await mixedLoad({ urls: [server.url], auth: org.auth, count: 200, seed: 9 });

  const { store, limits } = server.app.services.accounts!;
  const pool = server.app.services.engines.get('espeak')!;
  for (let i = 0; i < 500; i++) {
    const held = (await limits.active(org.orgId)) + (await store.ledger.reserved(org.orgId)) + (pool.info().busy as number);
    if (held === 0) break;
    await sleep(20);
  }
  assert.equal(await store.ledger.reserved(org.orgId), 0, 'no reservation left open');
  assert.equal(pool.info().busy, 0, 'no worker left busy');

  await auditBooks(store, org.orgId, INITIAL, outcomes);
  const finished = outcomes.filter((o) => o.finished).length;
  const unfinished = outcomes.filter((o) => !o.finished && o.leave === 'never').map((o) => `${o.kind}:${o.status}`);
  assert.ok(finished >= 100, `${finished} of 200 finished; not finished without leaving: ${unfinished.join(' ')}`);
});
