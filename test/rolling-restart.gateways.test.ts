/**
 * @module test/rolling-restart.gateways
 * A rolling restart as a Kubernetes Deployment does it, seen by keep-alive
 * clients: three gateway processes on one PostgreSQL schema and one Redis
 * prefix behind a layer-4 balancer that pins each connection to one gateway
 * (a Service), each gateway in turn replaced by a new one and SIGTERMed,
 * while undici (a pool) and Node's `http.Agent` (keep-alive) send request
 * after request over persistent connections. No request fails, every old
 * gateway exits 0, and the books match the characters served.
 */
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { Pool } from 'undici';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Store } from '../src/store/store.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { L4Balancer } from './helpers/l4-balancer.js';
import { allRows } from './helpers/mixed-load.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { deleteKeys, eventually, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';
import { ttsBody } from './helpers/server.js';

const ADMIN_TOKEN = 'rolling-restart-admin-token-0123';
/** The balancer probes every 200 ms and drops a gateway at its first 503: a 1 s drain delay covers it with room to spare. */
const PROBE_PERIOD_MS = 200;
const DRAIN_DELAY_MS = 1000;
const schema = freshSchemaName();
const keyPrefix = testPrefix();
const config = {
  ...TONE_MODELS,
  store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
  redis: { url: TEST_REDIS_URL, keyPrefix },
  accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0 },
  metrics: { enabled: false },
  server: { drainDelayMs: DRAIN_DELAY_MS, shutdownGraceMs: 20_000 },
};
let gateways: Gateway[] = [];
let balancer: L4Balancer;
let url: string;
let store: Store;

before(async () => {
  gateways = await Promise.all([startGateway(config), startGateway(config), startGateway(config)]);
  balancer = new L4Balancer(PROBE_PERIOD_MS);
  url = await balancer.listen();
  for (const gateway of gateways) balancer.add(gateway.url);
  assert.ok(await eventually(() => gateways.every((g) => balancer.isReady(g.url)), 10_000), 'every gateway is behind the balancer');
  store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 2, timeoutMs: 5000 });
});

after(async () => {
  await balancer?.close();
  await Promise.all(gateways.map((g) => g.stop()));
  await store?.close();
  await dropSchema(schema);
  await deleteKeys(keyPrefix);
});

interface Outcome {
  client: string;
  characters: number;
  ok: boolean;
  detail: string;
  closed: boolean;
}

test('keep-alive clients through a connection-pinning balancer: three gateways replaced one by one, no request fails, exact books', { timeout: 120_000 }, async () => {
  const INITIAL = 10_000_000;
  const org = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL });
  const headers = { ...org.auth, 'content-type': 'application/json' };
  const format = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 };
  const pool = new Pool(url, { connections: 4 });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const body = () => {
    const transcript = `Request number ${++n}, over a kept connection.`;
    return { transcript, json: JSON.stringify(ttsBody({ transcript, output_format: format })) };
  };

  const viaUndici = async () => {
    while (running) {
      const { transcript, json } = body();
      try {
        const response = await pool.request({ path: '/tts/bytes', method: 'POST', headers, body: json });
        const bytes = (await response.body.arrayBuffer()).byteLength;
        outcomes.push({ client: 'undici', characters: transcript.length, ok: response.statusCode === 200 && bytes > 0, detail: `${response.statusCode} ${bytes} B`, closed: response.headers.connection === 'close' });
      } catch (err) {
        outcomes.push({ client: 'undici', characters: transcript.length, ok: false, detail: String(err), closed: false });
      }
    }
  };
  const viaAgent = async () => {
    while (running) {
      const { transcript, json } = body();
      const outcome = await new Promise<Outcome>((resolve) => {
        const req = httpRequest(`${url}/tts/bytes`, { agent, method: 'POST', headers }, (response) => {
          let bytes = 0;
          response.on('data', (chunk: Buffer) => (bytes += chunk.length));
          response.once('end', () => resolve({ client: 'http.Agent', characters: transcript.length, ok: response.statusCode === 200 && bytes > 0, detail: `${response.statusCode} ${bytes} B`, closed: response.headers.connection === 'close' }));
          response.once('aborted', () => resolve({ client: 'http.Agent', characters: transcript.length, ok: false, detail: `cut after ${bytes} B`, closed: false }));
        });
        req.once('error', (err) => resolve({ client: 'http.Agent', characters: transcript.length, ok: false, detail: String(err), closed: false }));
        req.end(json);
      });
      outcomes.push(outcome);
    }
  };

  const load = Promise.all([...Array.from({ length: 4 }, viaUndici), ...Array.from({ length: 4 }, viaAgent)]);
  try {
    // Traffic on every gateway first, then each replaced in turn: the new one is ready before the old one leaves.
    assert.ok(await eventually(() => outcomes.length >= 40, 20_000), 'requests flow');
    for (const old of [...gateways]) {
      const fresh = await startGateway(config);
      gateways.push(fresh);
      balancer.add(fresh.url);
      assert.ok(await eventually(() => balancer.isReady(fresh.url), 10_000), 'the new gateway is ready');
      let code: number | null = null;
      old.process.once('exit', (c) => (code = c));
      const before = outcomes.length;
      old.process.kill('SIGTERM');
      await old.exited;
      balancer.remove(old.url);
      gateways = gateways.filter((g) => g !== old);
      assert.equal(code, 0, `the old gateway exited 0: ${old.stderr()}`);
      assert.ok(outcomes.length > before, 'requests went on during the restart');
    }
    const served = outcomes.length;
    assert.ok(await eventually(() => outcomes.length >= served + 40, 20_000), 'requests flow on the new gateways');
  } finally {
    running = false;
    await load;
    await pool.close();
    agent.destroy();
  }

  const failed = outcomes.filter((o) => !o.ok);
  assert.deepEqual(failed.slice(0, 5), [], `${failed.length} of ${outcomes.length} requests failed`);
  for (const client of ['undici', 'http.Agent']) {
    const closed = outcomes.filter((o) => o.client === client && o.closed).length;
    assert.ok(closed >= 3, `${client}: answers during the drains said Connection: close (${closed})`);
  }
  // The new gateways leave too, handing back their shares of the balance: nothing is held after them.
  await Promise.all(gateways.map((g) => g.stop()));
  gateways = [];
  assert.equal(await store.ledger.reserved(org.orgId), 0);
  // Every request charged once, for its characters, and nothing else.
  const charges = (await allRows(store, org.orgId)).filter((row) => row.kind === 'charge');
  assert.equal(charges.length, outcomes.length);
  assert.equal(
    charges.reduce((sum, row) => sum + row.characters!, 0),
    outcomes.reduce((sum, o) => sum + o.characters, 0),
  );
  const balance = (await store.orgs.get(org.orgId))!.balance;
  assert.equal(balance, INITIAL + charges.reduce((sum, row) => sum + row.credits, 0));
});
