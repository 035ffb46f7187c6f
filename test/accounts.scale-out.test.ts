/**
 * @module test/accounts.scale-out
 * Two servers on one store and one Redis, as a scaled-out deployment runs:
 * a change through either server's admin API reaches the other server at
 * once (well inside its 500 ms caches) and the CLI announces its changes;
 * the concurrency limit holds for the organisation across both; with Redis
 * unreachable, limited requests are served on local counters, or (`refuse`)
 * get 503 `limits_unavailable` and nothing is charged.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AccountsChange } from '../src/cluster/change-bus.js';
import { RedisChangeBus } from '../src/cluster/redis.js';
import { newOrg } from './helpers/accounts.js';
import { closedPort, deleteKeys, eventually, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';
import { startServer, tempDataDir, ttsBody, type TestServer } from './helpers/server.js';

const ADMIN_TOKEN = 'scale-out-admin-token-0123456789';
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const keyPrefix = testPrefix();
const dataDir = tempDataDir();
let a: TestServer;
let b: TestServer;

before(async () => {
  const config = { dataDir, accounts: { enabled: true, adminToken: ADMIN_TOKEN }, redis: { url: TEST_REDIS_URL, keyPrefix } };
  a = await startServer({ config });
  b = await startServer({ config });
});
after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await deleteKeys(keyPrefix);
});

/** Time from `change` resolving until `refused` holds on server B (polled every 5 ms, at most 1 s). */
async function msUntil(change: () => Promise<unknown>, refused: () => Promise<boolean>): Promise<number> {
  await change();
  const changed = performance.now();
  assert.ok(await eventually(refused, 1000, 5), 'server B saw the change within 1 s');
  return performance.now() - changed;
}

async function usageStatus(server: TestServer, auth: Record<string, string>): Promise<number> {
  const got = await fetch(server.url + '/usage', { headers: auth });
  await got.arrayBuffer();
  return got.status;
}

test('a key revoked through one server’s admin API is refused by the other at once', { timeout: 20_000 }, async () => {
  const org = await newOrg(a);
  assert.equal(await usageStatus(b, org.auth), 200, 'B has read (and cached) the key');
  const took = await msUntil(
    async () => {
      const revoked = await fetch(`${a.url}/admin/keys/${org.keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(revoked.status, 200);
      await revoked.arrayBuffer();
    },
    async () => (await usageStatus(b, org.auth)) === 401,
  );
  assert.ok(took < 250, `refused ${Math.round(took)} ms after the revocation (B's cache alone would hold ~500 ms)`);
});

test('a key revoked with the CLI (VOICEGATE_REDIS_URL set) is announced to running servers', { timeout: 30_000 }, async () => {
  const org = await newOrg(a);
  assert.equal(await usageStatus(b, org.auth), 200);
  const observer = new RedisChangeBus({ url: TEST_REDIS_URL, keyPrefix, timeoutMs: 1000 });
  const heard: AccountsChange[] = [];
  observer.subscribe((change) => heard.push(change));
  try {
    await observer.ready();
    const env = { ...process.env, VOICEGATE_DATA_DIR: dataDir, VOICEGATE_LOG_LEVEL: 'silent', VOICEGATE_REDIS_URL: TEST_REDIS_URL, VOICEGATE_REDIS_KEY_PREFIX: keyPrefix };
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MAIN, 'keys', 'revoke', org.keyId], { env });
    assert.equal(JSON.parse(stdout).status, 'revoked');
    assert.doesNotMatch(stderr, /warning/);
    assert.ok(await eventually(() => heard.some((c) => c.keyId === org.keyId), 1000, 5), 'the CLI announced the revocation');
    assert.ok(await eventually(async () => (await usageStatus(b, org.auth)) === 401, 1000, 5));
  } finally {
    await observer.close();
  }
});

test('the concurrency limit holds for the organisation across both servers', { timeout: 30_000 }, async () => {
  const org = await newOrg(a, { maxConcurrent: 1 });
  const long = ttsBody({ model_id: 'omnivoice', transcript: 'A longer text that takes a moment to generate. '.repeat(40) });
  const first = a.post('/tts/bytes', long, org.auth);
  const limits = b.app.services.accounts!.limits;
  assert.ok(await eventually(async () => (await limits.active(org.orgId)) === 1, 5000), 'B counts the request running on A');
  const second = await b.post('/tts/bytes', ttsBody(), org.auth);
  assert.equal(second.status, 429);
  assert.equal(((await second.json()) as { error_code: string }).error_code, 'overloaded');
  const done = await first;
  assert.equal(done.status, 200);
  await done.arrayBuffer();
  assert.ok(await eventually(async () => (await limits.active(org.orgId)) === 0, 5000), 'the slot freed on A is free on B');
  const third = await b.post('/tts/bytes', ttsBody(), org.auth);
  assert.equal(third.status, 200);
  await third.arrayBuffer();
});

test('with Redis unreachable and limits.whenSharedCountersFail refuse, a request gets 503 limits_unavailable quickly and nothing is charged', { timeout: 30_000 }, async () => {
  const down = await startServer({
    config: { accounts: { enabled: true }, redis: { url: `redis://127.0.0.1:${await closedPort()}`, keyPrefix }, limits: { whenSharedCountersFail: 'refuse' } },
  });
  try {
    for (const limits of [{ maxConcurrent: 2 }, { rateLimit: { requests: 10, per_seconds: 1 } }]) {
      const org = await newOrg(down, { ...limits, credits: 1000 });
      const begun = performance.now();
      const response = await down.post('/tts/bytes', ttsBody(), org.auth);
      const body = (await response.json()) as { error_code: string };
      assert.equal(response.status, 503, JSON.stringify(body));
      assert.equal(body.error_code, 'limits_unavailable');
      assert.equal(response.headers.get('retry-after'), '1');
      assert.ok(performance.now() - begun < 2500, `answered in ${Math.round(performance.now() - begun)} ms`);
      const ledger = (await down.app.services.accounts!.store.ledger.list(org.orgId, { limit: 10 })).data;
      assert.equal(ledger.filter((e) => e.kind === 'charge').length, 0, 'nothing charged');
    }
  } finally {
    await down.close();
  }
});

test('with Redis unreachable (by default), limited requests are served on local counters and charged; /readyz 200, degraded', { timeout: 30_000 }, async () => {
  const down = await startServer({ config: { accounts: { enabled: true }, redis: { url: `redis://127.0.0.1:${await closedPort()}`, keyPrefix } } });
  try {
    const org = await newOrg(down, { maxConcurrent: 1, rateLimit: { requests: 2, per_seconds: 60 }, credits: 1000 });
    const begun = performance.now();
    const response = await down.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(response.status, 200, await response.clone().text());
    await response.arrayBuffer();
    assert.ok(performance.now() - begun < 2500, `answered in ${Math.round(performance.now() - begun)} ms`);
    const ready = await fetch(`${down.url}/readyz`);
    assert.equal(ready.status, 200);
    const { status, limits } = (await ready.json()) as { status: string; limits: string };
    assert.deepEqual({ status, limits }, { status: 'degraded', limits: 'degraded' });
    const second = await down.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(second.status, 200);
    await second.arrayBuffer();
    const third = await down.post('/tts/bytes', ttsBody(), org.auth);
    assert.equal(third.status, 429, 'the rate limit holds on the local counters');
    await third.arrayBuffer();
    const ledger = (await down.app.services.accounts!.store.ledger.list(org.orgId, { limit: 10 })).data;
    assert.equal(ledger.filter((e) => e.kind === 'charge').length, 2, 'both served requests charged');
  } finally {
    await down.close();
  }
});
